"""A campaign file's paid content: its items read and written (campaign_file, campaign_writer)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from raffle.domain import content as rules
from raffle.domain.content import ContentState, ContentText, DeclaredContent, InvalidContent
from raffle.domain.errors import InvalidConfig


class ContentFileIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Annotated[str, Field(max_length=64)]
    title: Annotated[str, Field(max_length=rules.TITLE_MAX)]
    summary: Annotated[str, Field(max_length=rules.SUMMARY_MAX)] = ""
    cover: Annotated[str, Field(max_length=rules.COVER_MAX)] | None = None
    price_cents: Annotated[int, Field(ge=0, le=rules.PRICE_MAX)] = 0
    state: ContentState = ContentState.DRAFT  # for new content; stored content keeps its own
    preview: Annotated[str, Field(max_length=rules.PREVIEW_MAX)] = ""
    body: Annotated[str, Field(max_length=rules.BODY_MAX)] = ""


def declared(c: ContentFileIn) -> DeclaredContent:
    """The item as domain content; its first problem as InvalidConfig at its field."""
    try:
        text = ContentText(c.title, c.summary, c.body, c.preview, c.cover, c.price_cents)
        return DeclaredContent(c.id, text, c.state)
    except InvalidContent as error:
        field, message = error.problems[0]
        raise InvalidConfig(message, (field,)) from None


def written(c: DeclaredContent) -> dict[str, Any]:
    """The item in the file's shape, fields at their defaults left out."""
    t = c.text
    item: dict[str, Any] = {"id": c.id, "title": t.title}
    optional = {
        "summary": t.summary,
        "cover": t.cover,
        "price_cents": t.price_cents,
        "state": c.state.value if c.state is not ContentState.DRAFT else None,
        "preview": t.preview,
        "body": t.body,
    }
    return item | {k: v for k, v in optional.items() if v}
