"""Operators: an activity's participation policies and per-person caps (seed 004)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from raffle.entrypoints.http.bounds import ActivityId
from raffle.entrypoints.http.deps import AdminSession, IdempotencyKey, RaffleDep
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.participation_schemas import ParticipationIO
from raffle.entrypoints.http.problems import documented
from raffle.service.policies import participation_of, set_participation

router = APIRouter(prefix="/api/admin/activities", tags=["operator"])


@router.get("/{activity_id}/policies", responses=documented(401, 403, 404, 422))
async def policies(
    activity_id: ActivityId, session: AdminSession, raffle: RaffleDep
) -> ParticipationIO:
    """The activity's policies (by priority) and caps; none: everyone may join."""
    return ParticipationIO.of(await participation_of(activity_id, raffle.uow))


@router.put(
    "/{activity_id}/policies",
    response_model=ParticipationIO,
    responses=documented(401, 403, 404, 409, 422),
)
async def replace_policies(
    activity_id: ActivityId,
    body: ParticipationIO,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Replace the activity's policies and caps. Meeting one policy is enough: the first by
    priority that admits a user applies. The caps of a running activity are published and
    fixed (409 `odds_frozen`)."""

    async def run() -> ParticipationIO:
        found = await set_participation(body.participation(activity_id), raffle.uow)
        raffle.catalogue.forget()
        return ParticipationIO.of(found)

    return await once(request, raffle.idempotency, session.user_id, key, run)
