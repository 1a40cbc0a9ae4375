"""Operators (admin role): campaigns in, activity workflow, chances granted after purchases."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from raffle.adapters.campaign_file import parse_campaign
from raffle.adapters.campaign_pack import InvalidPack, unpack
from raffle.bootstrap import Raffle
from raffle.domain.campaign import Campaign
from raffle.entrypoints.http.bounds import ActivityId
from raffle.entrypoints.http.deps import AdminSession, IdempotencyKey, RaffleDep
from raffle.entrypoints.http.examples import CAMPAIGN
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.problems import documented
from raffle.entrypoints.http.schemas import (
    AccountOut,
    ActivityOut,
    CapDriftOut,
    LoadedOut,
    PrizeDriftOut,
    TopUpIn,
    TopUpOut,
)
from raffle.service.activities import change_state
from raffle.service.campaigns import load_campaign
from raffle.service.cap_counts import cap_report
from raffle.service.deny_lists import screen
from raffle.service.quotas import TopUp, top_up
from raffle.service.reconcile import stock_report

router = APIRouter(prefix="/api/admin", tags=["operator"])

MAX_CAMPAIGN = 16 * 1024 * 1024  # characters: ten thousand codes a pool leave room to spare


@router.post("/campaigns", response_model=LoadedOut, responses=documented(401, 403, 409, 422))
async def import_campaign(
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
    text: str = Body(media_type="application/yaml", max_length=MAX_CAMPAIGN, examples=[CAMPAIGN]),
) -> Response:
    """Store a campaign file (YAML, the format of `raffle load`), all or nothing."""

    async def run() -> LoadedOut:
        return await _load(parse_campaign(text, "request body"), raffle, session.user_id)

    return await once(request, raffle.idempotency, session.user_id, key, run)


_PACKED_BODY = {
    "required": True,
    "description": "A zip of `campaign.yaml` and the images its prizes name by path "
    "(`GET /api/admin/campaigns?format=zip` writes one).",
    "content": {
        "application/zip": {
            "schema": {"type": "string", "format": "binary", "maxLength": MAX_CAMPAIGN},
            "example": "(campaign.yaml and images/…)",
        }
    },
}


@router.post(
    "/campaigns/packed",
    response_model=LoadedOut,
    responses=documented(401, 403, 409, 422),
    openapi_extra={"requestBody": _PACKED_BODY},
)
async def import_packed(
    request: Request, session: AdminSession, key: IdempotencyKey, raffle: RaffleDep
) -> Response:
    """Store a packed campaign file (a zip of its YAML and its prizes' images), all or
    nothing."""

    async def run() -> LoadedOut:
        data = await request.body()
        if len(data) > MAX_CAMPAIGN:
            raise InvalidPack(f"request body: more than {MAX_CAMPAIGN} bytes")
        text, files = unpack(data, "request body")
        campaign = await run_in_threadpool(parse_campaign, text, "request body", files)
        return await _load(campaign, raffle, session.user_id)

    return await once(request, raffle.idempotency, session.user_id, key, run)


async def _load(campaign: Campaign, raffle: Raffle, by: str) -> LoadedOut:
    loaded = await load_campaign(campaign, raffle.uow(), raffle.tags, clock=raffle.clock, by=by)
    raffle.catalogue.forget()
    return LoadedOut(
        awards=loaded.awards,
        strategies=loaded.strategies,
        activities=loaded.activities,
        skus=loaded.skus,
        rebates=loaded.rebates,
        codes=loaded.codes,
        tags=loaded.tags,
    )


@router.post(
    "/activities/{activity_id}/{action}",
    response_model=ActivityOut,
    responses=documented(401, 403, 404, 409, 422),
)
async def transition(
    activity_id: ActivityId,
    action: Annotated[str, Path(max_length=16, examples=["submit"])],
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """A workflow step: submit, approve, refuse, edit, start, close or reopen. A step that
    does not apply to the current state is a 409 naming it."""

    async def run() -> ActivityOut:
        activity = await change_state(
            activity_id, action, raffle.uow(), now=raffle.clock.now(), by=session.user_id
        )
        raffle.catalogue.forget()
        return ActivityOut.of(activity)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.post("/top-ups", response_model=TopUpOut, responses=documented(401, 403, 404, 409, 422))
async def grant(
    body: TopUpIn, request: Request, session: AdminSession, key: IdempotencyKey, raffle: RaffleDep
) -> Response:
    """Credit a user's chances from a SKU after a purchase elsewhere, once per
    `out_business_no`: a repeat answers `credited: false` and changes nothing. A user id
    with no account is a 404 `unknown_user` unless `open_account` is true; a user a deny
    list names (their id, phone or device) is refused (403 `denied`)."""
    await screen(raffle.deny, user_id=body.user_id, profiles=raffle.profiles)

    async def run() -> TopUpOut:
        result = await top_up(
            TopUp(body.user_id, body.sku, body.out_business_no, body.open_account),
            catalogue=raffle.catalogue,
            config=raffle.uow,
            shards=raffle.shards,
            clock=raffle.clock,
            hints=raffle.hints,
        )
        return TopUpOut(credited=result.credited, account=AccountOut.of(result.account))

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.get("/activities/{activity_id}/reconciliation", responses=documented(401, 403, 404))
async def reconciliation(
    activity_id: ActivityId, session: AdminSession, raffle: RaffleDep
) -> list[PrizeDriftOut]:
    """Each stocked prize: configured stock, claimed units, award rows and what the counter
    holds. `drift` 0 and `oversold` 0 is a healthy activity (with no draw in flight)."""
    found = await stock_report(
        activity_id,
        catalogue=raffle.catalogue,
        shards=raffle.shards,
        stock=raffle.stock,
        claims=raffle.claims,
    )
    return [PrizeDriftOut.of(p) for p in found]


@router.get("/activities/{activity_id}/caps", responses=documented(401, 403, 404))
async def caps_reconciliation(
    activity_id: ActivityId, session: AdminSession, raffle: RaffleDep
) -> list[CapDriftOut]:
    """Each counted cap of the activity (total winners, total participants): its limit, the
    slots held and what the award rows count. `leaked` 0 and `over` 0 is a healthy activity
    (with no draw in flight)."""
    await raffle.catalogue.activity(activity_id)  # 404 for an unknown activity
    ledger = raffle.cap_ledger
    found = await cap_report(
        raffle.uow, raffle.shards, activity_id, ledger.counts if ledger else None
    )
    return [CapDriftOut.of(d) for d in found]
