"""Paid content: operators write it and put it on sale; players browse it and read theirs."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response

from raffle.adapters.markdown import render
from raffle.domain.content import ContentState
from raffle.entrypoints.http.content_schemas import (
    ContentBodyOut,
    ContentCardOut,
    ContentIn,
    ContentOut,
    ContentPageOut,
    ContentStateIn,
    ContentTextIn,
    HeldOut,
    MarkdownIn,
    MarkdownOut,
)
from raffle.entrypoints.http.deps import AdminSession, CurrentSession, IdempotencyKey, RaffleDep
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.problems import documented
from raffle.service import content as use
from raffle.service.content import ON_SALE

router = APIRouter()

ContentIdPath = Annotated[
    str, Path(min_length=1, max_length=64, pattern=r"^[\w.-]+$", examples=["course-1"])
]
After = Annotated[str | None, Query(max_length=64, description="The last id of a page.")]
Limit = Annotated[int, Query(ge=1, le=100)]


@router.get("/api/content", tags=["player"], responses=documented(422))
async def on_sale(
    raffle: RaffleDep, after: After = None, limit: Limit = 50
) -> list[ContentCardOut]:
    """Content on sale, by id, a page at a time (`after`: the last id of the page before)."""
    found = await use.listed(raffle.uow, states=ON_SALE, after=after, limit=limit)
    return [ContentCardOut.of(c, selling=raffle.gateway is not None) for c in found]


@router.get("/api/content/{content_id}", tags=["player"], responses=documented(401, 404, 422))
async def one(
    content_id: ContentIdPath, session: CurrentSession, raffle: RaffleDep
) -> ContentPageOut:
    """Content on sale, or held by me in any state: its preview, and whether I hold it."""
    found = await use.open_content(
        session.user_id, content_id, uow=raffle.uow, shards=raffle.shards
    )
    return ContentPageOut.opened(found.content, found.held, selling=raffle.gateway is not None)


@router.get(
    "/api/content/{content_id}/body", tags=["player"], responses=documented(401, 402, 404, 422)
)
async def body(
    content_id: ContentIdPath, session: CurrentSession, raffle: RaffleDep
) -> ContentBodyOut:
    """The body, to those who hold the content (won or bought); the rest get 402
    `payment_required` with its `price_cents`."""
    found = await use.read(session.user_id, content_id, uow=raffle.uow, shards=raffle.shards)
    return ContentBodyOut.of(found)


@router.get("/api/me/content", tags=["player"], responses=documented(401))
async def mine(session: CurrentSession, raffle: RaffleDep) -> list[HeldOut]:
    """The content I may open, oldest first, and the order that granted each."""
    held = await use.my_content(session.user_id, uow=raffle.uow, shards=raffle.shards)
    return [HeldOut.of(h) for h in held]


@router.get("/api/admin/content", tags=["operator"], responses=documented(401, 403, 422))
async def listed(
    session: AdminSession,
    raffle: RaffleDep,
    state: ContentState | None = None,
    after: After = None,
    limit: Limit = 50,
) -> list[ContentOut]:
    """Content in every state (or in `state`), by id, a page at a time."""
    states = None if state is None else (state,)
    found = await use.listed(raffle.uow, states=states, after=after, limit=limit)
    return [ContentOut.of(c) for c in found]


@router.get(
    "/api/admin/content/{content_id}", tags=["operator"], responses=documented(401, 403, 404, 422)
)
async def stored(content_id: ContentIdPath, session: AdminSession, raffle: RaffleDep) -> ContentOut:
    return ContentOut.of(await use.stored(content_id, raffle.uow))


@router.post(
    "/api/admin/content",
    tags=["operator"],
    response_model=ContentOut,
    responses=documented(400, 401, 403, 409, 422),
)
async def create(
    body: ContentIn, request: Request, session: AdminSession, key: IdempotencyKey, raffle: RaffleDep
) -> Response:
    """New content, a draft (409 `content_exists` when the id is taken)."""

    async def run() -> ContentOut:
        made = await use.create(body.id, body.to_text(), uow=raffle.uow, clock=raffle.clock)
        return ContentOut.of(made)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.put(
    "/api/admin/content/{content_id}",
    tags=["operator"],
    response_model=ContentOut,
    responses=documented(400, 401, 403, 404, 409, 422),
)
async def edit(
    content_id: ContentIdPath,
    body: ContentTextIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """New text and price, in any state (on sale: at least 1 cent)."""

    async def run() -> ContentOut:
        text = body.to_text()
        return ContentOut.of(await use.edit(content_id, text, uow=raffle.uow, clock=raffle.clock))

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.post(
    "/api/admin/content/{content_id}/state",
    tags=["operator"],
    response_model=ContentOut,
    responses=documented(400, 401, 403, 404, 409, 422),
)
async def move(
    content_id: ContentIdPath,
    body: ContentStateIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Put it on sale (from draft or off sale) or take it off sale; any other step is 409
    `illegal_content_state` with its `current_state`. Holders keep reading it off sale."""

    async def run() -> ContentOut:
        moved = await use.move(content_id, body.state, uow=raffle.uow, clock=raffle.clock)
        return ContentOut.of(moved)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.post(
    "/api/admin/content/preview", tags=["operator"], responses=documented(400, 401, 403, 422)
)
async def preview(body: MarkdownIn, session: AdminSession) -> MarkdownOut:
    """Markdown as players will see it (the editor's preview): changes nothing."""
    return MarkdownOut(html=render(body.markdown))
