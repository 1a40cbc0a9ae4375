"""Operators' runtime switches: draws of an activity, rules, limits, read-only maintenance."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response

from raffle.entrypoints.http.deps import AdminSession, IdempotencyKey, RaffleDep
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.problems import documented
from raffle.entrypoints.http.switch_schemas import SwitchChangeOut, SwitchIn, SwitchOut
from raffle.service.switches import audit, set_switch, switches

router = APIRouter(prefix="/api/admin/switches", tags=["operator"])

SwitchName = Annotated[str, Path(max_length=64, examples=["activity.100301.draws"])]


@router.get("", responses=documented(401, 403))
async def listed(session: AdminSession, raffle: RaffleDep) -> list[SwitchOut]:
    """Every switch: `maintenance` (on: every write answers 503 `maintenance`),
    `activity.<id>.draws` (off: its draws answer 503 `draws_paused`),
    `strategy.<id>.rule.weight` and `strategy.<id>.rule.lock.<award>` (off: the rule is taken
    out of the strategy, and out of its published odds), and the limits
    `draws_per_second`, `registrations_per_hour`, `draw_batch_size`."""
    return [SwitchOut.of(s) for s in await switches(raffle.switches, raffle.uow)]


@router.put("/{name}", response_model=SwitchOut, responses=documented(401, 403, 404, 409, 422))
async def change(
    name: SwitchName,
    body: SwitchIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Set a switch for every process (in effect within a second), audited with your name.
    Setting the value it has changes nothing."""

    async def run() -> SwitchOut:
        found = await set_switch(
            name,
            body.value,
            actor=session.user_id,
            board=raffle.switches,
            uow=raffle.uow,
            clock=raffle.clock,
        )
        return SwitchOut.of(found)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.get("/audit", responses=documented(401, 403, 422))
async def changes(
    session: AdminSession,
    raffle: RaffleDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[SwitchChangeOut]:
    """The latest changes, newest first: who set which switch from what to what, and when."""
    return [SwitchChangeOut.of(c) for c in await audit(raffle.switches, limit)]
