"""Operators' tags (audiences): define, list, delete, their members, a preview of who they hold."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response

from raffle.domain.tags import NAME
from raffle.entrypoints.http.bounds import Cursor
from raffle.entrypoints.http.deps import AdminSession, IdempotencyKey, RaffleDep
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.problems import documented
from raffle.entrypoints.http.tag_schemas import (
    MembersChanged,
    MembersIn,
    MembersOut,
    PreviewOut,
    TagDeleted,
    TagIn,
    TagOut,
)
from raffle.service import tags as use

router = APIRouter(prefix="/api/admin/tags", tags=["operator"])

TagName = Annotated[str, Path(max_length=64, pattern=f"^{NAME.pattern}$", examples=["senior_vip"])]


@router.get("", responses=documented(401, 403))
async def listed(session: AdminSession, raffle: RaffleDep) -> list[TagOut]:
    """Every tag, by name."""
    return [TagOut.of(t) for t in await use.tags(raffle.tags)]


@router.get("/{name}", responses=documented(401, 403, 404, 422))
async def one(name: TagName, session: AdminSession, raffle: RaffleDep) -> TagOut:
    return TagOut.of(await use.tag(name, raffle.tags))


@router.put("/{name}", response_model=TagOut, responses=documented(401, 403, 404, 409, 422))
async def save(
    name: TagName,
    body: TagIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Create or replace a tag, for every process within a second. A dynamic tag's condition
    (or seed 004's clause) is compiled now: a malformed one is refused with its line and
    column (422 `malformed_condition`); a reference to an unknown tag (404 `unknown_tag`)
    or one that would close a ring (409 `tag_cycle`) is refused too, and nothing changes."""

    async def run() -> TagOut:
        tag = body.tag(name)
        await use.save_tag(tag, raffle.tags)
        return TagOut.of(tag)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.delete("/{name}", response_model=TagDeleted, responses=documented(401, 403, 404, 409, 422))
async def delete(
    name: TagName, request: Request, session: AdminSession, key: IdempotencyKey, raffle: RaffleDep
) -> Response:
    """Delete a tag and its members; refused (409 `tag_in_use`) while another refers to it."""

    async def run() -> TagDeleted:
        await use.delete_tag(name, raffle.tags)
        return TagDeleted(tag=name, deleted=True)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.get("/{name}/members", responses=documented(401, 403, 404, 422))
async def members(
    name: TagName,
    session: AdminSession,
    raffle: RaffleDep,
    after: Cursor = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> MembersOut:
    """A static tag's members by user id, a page at a time."""
    listed = [u for u in await use.members(name, raffle.tags) if after is None or u > after]
    page = listed[:limit]
    more = len(listed) > limit
    return MembersOut(tag=name, user_ids=page, next=page[-1] if more else None)


@router.post(
    "/{name}/members", response_model=MembersChanged, responses=documented(401, 403, 404, 422)
)
async def add(
    name: TagName,
    body: MembersIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Add users to a static tag (an imported list: up to 10,000 a request); those already
    in it stay once. `changed`: how many were new."""

    async def run() -> MembersChanged:
        added = await use.add_members(name, body.user_ids, raffle.tags)
        return MembersChanged(tag=name, changed=added)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.post(
    "/{name}/members/remove",
    response_model=MembersChanged,
    responses=documented(401, 403, 404, 422),
)
async def remove(
    name: TagName,
    body: MembersIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Take users out of a static tag. `changed`: how many were members."""

    async def run() -> MembersChanged:
        removed = await use.remove_members(name, body.user_ids, raffle.tags)
        return MembersChanged(tag=name, changed=removed)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.get("/{name}/preview", responses=documented(401, 403, 404, 422))
async def preview(
    name: TagName,
    session: AdminSession,
    raffle: RaffleDep,
    today: Annotated[date | None, Query(description="The day ages are for; today (UTC).")] = None,
    sample: Annotated[int, Query(ge=0, le=100)] = 20,
    scan: Annotated[int, Query(ge=1, le=1_000_000)] = 100_000,
) -> PreviewOut:
    """How many users the tag holds, scanning up to `scan` profiles, and the first few."""
    found = await use.preview(
        name,
        raffle.tags,
        raffle.profile_pages,
        today or raffle.clock.now().date(),
        sample=sample,
        scan=scan,
    )
    return PreviewOut.of(name, found)
