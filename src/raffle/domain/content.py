"""Paid content (seed 000 付费知识): what it says, what it costs, whether it is on sale."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from raffle.domain.errors import IllegalState, InvalidFields, RaffleError

# Ids travel in paths and in content awards' config: letters (any script), digits, '.-_'.
_ID = re.compile(r"^[\w.-]{1,64}$")
TITLE_MAX = 120
SUMMARY_MAX = 500
PREVIEW_MAX = 10_000
BODY_MAX = 100_000
COVER_MAX = 500
PRICE_MAX = 100_000_000  # cents: a million yuan, far above any knowledge sold here
_COVER = re.compile(r"^https://[^\s\"'<>\\]+$")


class ContentState(StrEnum):
    DRAFT = "draft"  # being written: players do not see it
    ON_SALE = "on_sale"
    OFF_SALE = "off_sale"  # hidden from buyers; those who hold it still read it


# to -> the states it may be reached from; storage applies each as a compare-and-set.
TRANSITIONS: dict[ContentState, frozenset[ContentState]] = {
    ContentState.ON_SALE: frozenset({ContentState.DRAFT, ContentState.OFF_SALE}),
    ContentState.OFF_SALE: frozenset({ContentState.ON_SALE}),
    ContentState.DRAFT: frozenset(),
}


class InvalidContent(InvalidFields):
    """Content with problems, each named by its field."""

    code = "invalid_content"


class UnknownContent(RaffleError):
    code = "unknown_content"


class ContentExists(RaffleError):
    code = "content_exists"


class IllegalContentState(IllegalState):
    """A state change the content's current state does not allow."""

    code = "illegal_content_state"


class PaymentRequired(RaffleError):
    """The body is for those who hold the content: its price, and the preview for the rest."""

    code = "payment_required"

    def __init__(self, content_id: str, price_cents: int) -> None:
        super().__init__(f"content {content_id!r} is for those who bought it or won it")
        self.content_id = content_id
        self.price_cents = price_cents


@dataclass(frozen=True, slots=True)
class ContentText:
    """What an operator writes: everything but the state. Checked on creation."""

    title: str
    summary: str = ""
    body: str = ""  # Markdown, for holders only
    preview: str = ""  # Markdown, shown to everyone
    cover: str | None = None  # an https URL; later also an uploaded image's reference
    price_cents: int = 0

    def __post_init__(self) -> None:
        if problems := text_problems(self):
            raise InvalidContent(problems)


@dataclass(frozen=True, slots=True)
class Content:
    id: str
    text: ContentText
    state: ContentState
    created_at: datetime
    updated_at: datetime

    @classmethod
    def draft(cls, content_id: str, text: ContentText, at: datetime) -> Content:
        check_id(content_id)
        return cls(content_id, text, ContentState.DRAFT, at, at)

    def edited(self, text: ContentText, at: datetime) -> Content:
        """The content with new text; content on sale keeps a price."""
        check_sellable(self.state, text)
        return replace(self, text=text, updated_at=at)

    def moved(self, to: ContentState, at: datetime) -> Content:
        """The content in state `to`; on sale only with a price."""
        if self.state not in TRANSITIONS[to]:
            raise IllegalContentState(f"content that is {self.state} cannot go {to}", self.state)
        check_sellable(to, self.text)
        return replace(self, state=to, updated_at=at)

    @property
    def visible(self) -> bool:
        """Whether players who do not hold it see it (and may buy it)."""
        return self.state is ContentState.ON_SALE


@dataclass(frozen=True, slots=True)
class DeclaredContent:
    """Content as a campaign file declares it; its state is for new content only (stored
    content keeps its own, as activities do)."""

    id: str
    text: ContentText
    state: ContentState = ContentState.DRAFT

    def __post_init__(self) -> None:
        check_id(self.id)
        check_sellable(self.state, self.text)


def check_id(content_id: str) -> None:
    if not _ID.match(content_id):
        raise InvalidContent([("id", "1-64 letters, digits, '.', '-' or '_'")])


def check_sellable(state: ContentState, text: ContentText) -> None:
    if state is ContentState.ON_SALE and text.price_cents < 1:
        raise InvalidContent([("price_cents", "content on sale costs at least 1 cent")])


def text_problems(t: ContentText) -> list[tuple[str, str]]:
    found = [
        ("title", _text(t.title, TITLE_MAX, blank=False)),
        ("summary", _text(t.summary, SUMMARY_MAX, blank=True)),
        ("preview", None if len(t.preview) <= PREVIEW_MAX else f"at most {PREVIEW_MAX:,} chars"),
        ("body", None if len(t.body) <= BODY_MAX else f"at most {BODY_MAX:,} characters"),
        ("cover", _cover(t.cover)),
        ("price_cents", None if 0 <= t.price_cents <= PRICE_MAX else f"0 to {PRICE_MAX:,}"),
    ]
    return [(field, message) for field, message in found if message]


def _text(value: str, most: int, *, blank: bool) -> str | None:
    if not blank and not value.strip():
        return "must not be blank"
    if len(value) > most:
        return f"at most {most} characters"
    if any(not c.isprintable() for c in value):
        return "one line, no control characters"
    return None


def _cover(cover: str | None) -> str | None:
    if cover is None:
        return None
    if len(cover) > COVER_MAX or not _COVER.match(cover):
        return f"an https:// address of at most {COVER_MAX} characters"
    return None
