"""Scheduled draws: a player's entry and its outcome, the public record, the entrant list."""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from raffle.entrypoints.http.bounds import ActivityId
from raffle.entrypoints.http.deps import (
    AdminSession,
    CurrentSession,
    IdempotencyKey,
    RaffleDep,
    client_ip,
)
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.problems import documented
from raffle.entrypoints.http.scheduled_schemas import EntranceOut, ScheduledOut
from raffle.service import scheduled

router = APIRouter()


@router.post(
    "/api/activities/{activity_id}/entry",
    tags=["player"],
    response_model=EntranceOut,
    responses=documented(401, 403, 404, 409, 422, 429),
)
async def enter(
    activity_id: ActivityId,
    request: Request,
    session: CurrentSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Enter a scheduled activity's draw: until its cutoff (then 409 `entry_closed`); the
    checks of a draw apply (deny lists, pause, rate limit, join code, who the policies
    admit). Entering again answers the same entrance."""

    async def run() -> EntranceOut:
        found = await scheduled.enter_draw(
            session.user_id, activity_id, catalogue=raffle.catalogue, uow=raffle.uow,
            clock=raffle.clock, checks=raffle.draw_checks, profiles=raffle.profiles,
            audience=raffle.tags, ip=client_ip(request),
        )  # fmt: skip
        return EntranceOut.of(found)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.get(
    "/api/activities/{activity_id}/entry", tags=["player"], responses=documented(401, 404, 409)
)
async def my_entry(
    activity_id: ActivityId, session: CurrentSession, raffle: RaffleDep
) -> EntranceOut:
    """The player's entrance, and once drawn the awards they won (404 `not_entered`)."""
    found = await scheduled.entrance(
        session.user_id, activity_id, catalogue=raffle.catalogue, uow=raffle.uow
    )
    return EntranceOut.of(found)


@router.get(
    "/api/activities/{activity_id}/scheduled-draw",
    tags=["player"],
    responses=documented(404, 409),
)
async def scheduled_draw(activity_id: ActivityId, raffle: RaffleDep) -> ScheduledOut:
    """The draw's public record (also under the activity's fairness): what anyone checks
    the winners by, with the entrant list and `raffle verify-draw`."""
    activity = await raffle.catalogue.activity(activity_id)
    found = await scheduled.public_record(activity, uow=raffle.uow, catalogue=raffle.catalogue)
    return ScheduledOut.of(found)


@router.get(
    "/api/admin/activities/{activity_id}/entrants",
    tags=["operator"],
    response_class=StreamingResponse,
    responses=documented(401, 403, 404, 409),
)
async def entrants(activity_id: ActivityId, _: AdminSession, raffle: RaffleDep) -> Response:
    """The frozen entrant list as the file its published hash is of: the ids sorted by
    their bytes, one a line (`sha256sum` of it is `entrants_hash`)."""
    activity = await raffle.catalogue.activity(activity_id)
    pages = await scheduled.entrant_pages(activity, uow=raffle.uow)

    async def lines() -> AsyncIterator[bytes]:
        async for page in pages:
            yield "".join(f"{user_id}\n" for user_id in page).encode()

    return StreamingResponse(lines(), media_type="text/plain; charset=utf-8")
