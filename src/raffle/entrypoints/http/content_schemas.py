"""The HTTP shapes of paid content: operators' text and state, players' cards and pages."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from raffle.adapters.markdown import render
from raffle.domain import content as rules
from raffle.domain.content import Content, ContentState, ContentText
from raffle.entrypoints.http import examples
from raffle.entrypoints.http.examples import examples_of
from raffle.service.content import Held

BUY = "/api/payments/orders"
ContentId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[\w.-]+$")]


class ContentTextIn(BaseModel):
    model_config = examples_of(examples.CONTENT_TEXT_IN) | ConfigDict(extra="forbid")

    title: Annotated[str, Field(max_length=rules.TITLE_MAX)]
    summary: Annotated[str, Field(max_length=rules.SUMMARY_MAX)] = ""
    body: Annotated[str, Field(max_length=rules.BODY_MAX)] = Field(
        "", description="Markdown (raw HTML shows as text), read only by those who hold it."
    )
    preview: Annotated[str, Field(max_length=rules.PREVIEW_MAX)] = Field(
        "", description="Markdown, shown to everyone."
    )
    cover: Annotated[str, Field(max_length=rules.COVER_MAX)] | None = Field(
        None, description="The cover image: an https:// address."
    )
    price_cents: int = Field(
        0, ge=0, le=rules.PRICE_MAX, description="At least 1 for content on sale."
    )

    def to_text(self) -> ContentText:
        return ContentText(
            self.title, self.summary, self.body, self.preview, self.cover, self.price_cents
        )


class ContentIn(ContentTextIn):
    model_config = examples_of(examples.CONTENT_IN) | ConfigDict(extra="forbid")

    id: ContentId = Field(description="What content awards name in their config.")


class ContentStateIn(BaseModel):
    model_config = examples_of(examples.CONTENT_STATE_IN) | ConfigDict(extra="forbid")

    state: ContentState = Field(description="draft -> on_sale <-> off_sale.")


class ContentOut(BaseModel):
    """Content as operators edit it: its Markdown as written."""

    model_config = examples_of(examples.CONTENT)

    id: str
    title: str
    summary: str
    body: str
    preview: str
    cover: str | None
    price_cents: int
    state: ContentState
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, c: Content) -> ContentOut:
        t = c.text
        return cls(
            id=c.id,
            title=t.title,
            summary=t.summary,
            body=t.body,
            preview=t.preview,
            cover=t.cover,
            price_cents=t.price_cents,
            state=c.state,
            created_at=c.created_at,
            updated_at=c.updated_at,
        )


class ContentCardOut(BaseModel):
    """Content on sale as a list shows it."""

    model_config = examples_of(examples.CONTENT_CARD)

    id: str
    title: str
    summary: str
    cover: str | None
    price_cents: int
    buy: str | None = Field(
        description='Where to buy it: POST `{"content_id": id}` there for a payment order; '
        "null when payments are off, or the content is not on sale."
    )

    @classmethod
    def of(cls, c: Content, *, selling: bool = False) -> ContentCardOut:
        """`selling`: payment orders are offered (a payment gateway is configured)."""
        t = c.text
        return cls(
            id=c.id, title=t.title, summary=t.summary, cover=t.cover, price_cents=t.price_cents,
            buy=BUY if selling and c.visible and t.price_cents > 0 else None,
        )  # fmt: skip


class ContentPageOut(ContentCardOut):
    """One piece of content: its preview for everyone, and whether I may read its body."""

    model_config = examples_of(examples.CONTENT_PAGE)

    preview_html: str = Field(description="The preview, as sanitised HTML.")
    held: bool = Field(description="I hold it: its body is mine to read (…/body).")

    @classmethod
    def opened(cls, c: Content, held: bool, *, selling: bool = False) -> ContentPageOut:
        card = ContentCardOut.of(c, selling=selling and not held).model_dump()
        return cls(**card, preview_html=render(c.text.preview), held=held)


class ContentBodyOut(BaseModel):
    model_config = examples_of(examples.CONTENT_BODY)

    id: str
    title: str
    body_html: str = Field(description="The body, as sanitised HTML.")

    @classmethod
    def of(cls, c: Content) -> ContentBodyOut:
        return cls(id=c.id, title=c.text.title, body_html=render(c.text.body))


class HeldOut(BaseModel):
    """Content I hold, and the order that granted it."""

    model_config = examples_of(examples.MY_CONTENT)

    content_id: str
    order_id: str = Field(description="The raffle order that granted it.")
    granted_at: datetime
    title: str | None = Field(description="Null: a prize named content not in the catalogue.")
    cover: str | None

    @classmethod
    def of(cls, h: Held) -> HeldOut:
        g, c = h.grant, h.content
        return cls(
            content_id=g.content_id,
            order_id=g.order_id,
            granted_at=g.granted_at,
            title=None if c is None else c.text.title,
            cover=None if c is None else c.text.cover,
        )


class MarkdownIn(BaseModel):
    model_config = examples_of(examples.MARKDOWN_IN) | ConfigDict(extra="forbid")

    markdown: Annotated[str, Field(max_length=rules.BODY_MAX)]


class MarkdownOut(BaseModel):
    model_config = examples_of(examples.MARKDOWN_OUT)

    html: str
