"""Join codes: players redeem one; operators generate, import, count and export them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response, StreamingResponse

from raffle.adapters.join_code_file import csv_lines
from raffle.domain.join_codes import ENTROPY_BITS, SOURCE_MAX
from raffle.entrypoints.http.bounds import ActivityId
from raffle.entrypoints.http.deps import (
    AdminSession,
    CurrentSession,
    IdempotencyKey,
    RaffleDep,
    client_ip,
)
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.join_code_schemas import (
    CountsOut,
    GeneratedOut,
    GenerateIn,
    HeldOut,
    ImportedOut,
    ImportIn,
    RedeemedOut,
    RedeemIn,
)
from raffle.entrypoints.http.problems import documented
from raffle.service import join_codes
from raffle.service.join_codes import Batch

router = APIRouter()
ADMIN = "/api/admin/activities/{activity_id}/join-codes"
CSV_EXAMPLE = (
    "code,state,user_id,bound_at,source,remark,created_at\n"
    "7KQ3M9XD2HFT,used,alice,2026-11-25T02:00:00Z,poster,,2026-11-20T08:00:00Z\n"
)


@router.post(
    "/api/activities/{activity_id}/join-code",
    tags=["player"],
    response_model=RedeemedOut,
    responses=documented(401, 404, 409, 422, 429),
)
async def redeem(
    activity_id: ActivityId,
    body: RedeemIn,
    request: Request,
    session: CurrentSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Redeem a join code: it is bound to the player for good (a player holds one code an
    activity). A wrong code is 422 `join_code_invalid`, another's 409 `join_code_used`;
    after 10 of those an hour the player, or their address, is refused (429)."""

    async def run() -> RedeemedOut:
        found = await join_codes.redeem(
            activity_id,
            body.code,
            session.user_id,
            ip=client_ip(request),
            uow=raffle.uow(),
            limiter=raffle.limiter,
            clock=raffle.clock,
            gate=raffle.join_codes,
        )
        return RedeemedOut.of(found)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.get(
    "/api/activities/{activity_id}/join-code", tags=["player"], responses=documented(401, 404)
)
async def mine(activity_id: ActivityId, session: CurrentSession, raffle: RaffleDep) -> HeldOut:
    """The join code the player holds in the activity (`code` null: none yet)."""
    return HeldOut.of(
        activity_id, await join_codes.held(activity_id, session.user_id, raffle.uow())
    )


@router.post(
    f"{ADMIN}/generate",
    tags=["operator"],
    response_model=GeneratedOut,
    responses=documented(401, 403, 404, 422),
)
async def generate(
    activity_id: ActivityId,
    body: GenerateIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Generate codes from the CSPRNG: 12 symbols of Crockford's base32 each (60 bits),
    unique in the activity. The export (`…/join-codes.csv?source=`) lists them."""

    async def run() -> GeneratedOut:
        made = await join_codes.generate_codes(
            Batch(activity_id, body.source, body.remark),
            body.count,
            uow=raffle.uow(),
            rng=raffle.code_rng,
            clock=raffle.clock,
        )
        return GeneratedOut(generated=made, entropy_bits=ENTROPY_BITS)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.post(
    f"{ADMIN}/import",
    tags=["operator"],
    response_model=ImportedOut,
    responses=documented(401, 403, 404, 422),
)
async def import_codes(
    activity_id: ActivityId,
    body: ImportIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Import codes made elsewhere (4-32 symbols of 0-9 and A-Z but U, hyphens ignored; I
    and L read as 1, O as 0), all or nothing: one that is not a code is 422
    `invalid_join_codes` naming each. Codes the activity has are left as they were."""

    async def run() -> ImportedOut:
        batch = Batch(activity_id, body.source, body.remark)
        found = await join_codes.import_codes(
            batch, body.codes, uow=raffle.uow(), clock=raffle.clock
        )
        return ImportedOut.of(found)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.get(ADMIN, tags=["operator"], responses=documented(401, 403, 404))
async def counts(activity_id: ActivityId, session: AdminSession, raffle: RaffleDep) -> CountsOut:
    """How many codes the activity has, used and unused."""
    return CountsOut.of(await join_codes.counts(activity_id, raffle.uow()))


@router.get(
    f"{ADMIN}.csv",
    tags=["operator"],
    response_class=Response,
    responses={
        **documented(401, 403, 404, 422),
        200: {"content": {"text/csv": {"example": CSV_EXAMPLE}}},
    },
)
async def export(
    activity_id: ActivityId,
    session: AdminSession,
    raffle: RaffleDep,
    source: Annotated[str | None, Query(min_length=1, max_length=SOURCE_MAX)] = None,
) -> Response:
    """Every code of the activity (or of one `source`) with its state, the user it is bound
    to and when, as CSV."""
    codes = await join_codes.exported(activity_id, raffle.uow, source)
    return StreamingResponse(
        csv_lines(codes),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="join-codes-{activity_id}.csv"'},
    )
