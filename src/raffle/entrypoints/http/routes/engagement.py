"""Engagement: daily sign-in and its calendar, my points, exchanging points for chances,
and behaviours reported by operators."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from raffle.entrypoints.http.bounds import ActivityId, Cursor, Limit
from raffle.entrypoints.http.deps import (
    AdminSession,
    AdmittedSession,
    CurrentSession,
    IdempotencyKey,
    RaffleDep,
)
from raffle.entrypoints.http.engagement_schemas import (
    BalanceOut,
    BehaviourIn,
    BehaviourOut,
    ExchangeIn,
    ExchangeOut,
    PointsOrderOut,
    PointsOut,
    RebateOut,
    SignInOut,
    SignInsOut,
    SkuOut,
)
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.problems import documented
from raffle.entrypoints.http.schemas import AccountOut
from raffle.service.points import Exchange, exchange, my_points
from raffle.service.rebates import Behaviour, rebate, sign_in, sign_ins
from raffle.service.shop import shop

router = APIRouter(tags=["engagement"])

MONTH = r"^\d{4}-(0[1-9]|1[0-2])$"


@router.post(
    "/api/activities/{activity_id}/sign-in",
    response_model=SignInOut,
    responses=documented(401, 403, 404, 409, 422),
)
async def sign_in_today(
    activity_id: ActivityId,
    request: Request,
    session: AdmittedSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Sign in today (the activity's calendar day) and receive its `sign_in` rebate. A second
    sign-in the same day answers `granted: false` with the first one's rebate and grants
    nothing; the next day in the activity's time zone is a new sign-in."""

    async def run() -> SignInOut:
        done = await sign_in(
            session.user_id,
            activity_id,
            catalogue=raffle.catalogue,
            config=raffle.uow,
            shards=raffle.shards,
            clock=raffle.clock,
            calendar=raffle.calendar,
            hints=raffle.hints,
        )
        return SignInOut(
            granted=done.granted, day=done.day, streak=done.streak, rebate=RebateOut.of(done.order)
        )

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.get("/api/activities/{activity_id}/sign-ins", responses=documented(401, 404, 422))
async def calendar(
    activity_id: ActivityId,
    session: CurrentSession,
    raffle: RaffleDep,
    month: Annotated[
        str | None,
        Query(pattern=MONTH, description="YYYY-MM; default: this month in the activity's zone"),
    ] = None,
) -> SignInsOut:
    """My sign-in calendar for a month, and my current streak."""
    found = await sign_ins(
        session.user_id,
        activity_id,
        month,
        catalogue=raffle.catalogue,
        clock=raffle.clock,
        calendar=raffle.calendar,
    )
    return SignInsOut(
        month=f"{found.month:%Y-%m}",
        days=found.days,
        today=found.today,
        signed_today=found.signed_today,
        streak=found.streak,
    )


@router.get("/api/activities/{activity_id}/skus", tags=["player"], responses=documented(404))
async def skus(activity_id: ActivityId, raffle: RaffleDep) -> list[SkuOut]:
    """The activity's SKUs (public): the chances each adds, its points price, its stock left.
    Buy one with `POST /api/me/points/exchanges`."""
    found = await shop(activity_id, catalogue=raffle.catalogue, config=raffle.uow)
    return [SkuOut.of(i) for i in found]


@router.get("/api/me/points", responses=documented(401, 422))
async def points(
    session: CurrentSession,
    raffle: RaffleDep,
    before: Cursor = None,
    limit: Limit = 20,
) -> PointsOut:
    """My points balance and my points orders, newest first."""
    mine = await my_points(session.user_id, shards=raffle.shards, before=before, limit=limit)
    return PointsOut(
        balance=BalanceOut.of(mine.account),
        orders=[PointsOrderOut.of(o) for o in mine.orders],
        next=mine.next,
    )


@router.post(
    "/api/me/points/exchanges",
    response_model=ExchangeOut,
    responses=documented(401, 403, 404, 409, 422, 503),
)
async def exchange_points(
    body: ExchangeIn,
    request: Request,
    session: AdmittedSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Buy a SKU's chances with points: debited and credited in one transaction. A balance
    below the price is a 409 `insufficient_points` and changes nothing. With an
    Idempotency-Key the exchange happens once, even if this answer is lost."""

    async def run() -> ExchangeOut:
        done = await exchange(
            Exchange(session.user_id, body.sku, key),
            catalogue=raffle.catalogue,
            config=raffle.uow,
            shards=raffle.shards,
            clock=raffle.clock,
            hints=raffle.hints,
        )
        return ExchangeOut(
            exchanged=done.exchanged,
            order=PointsOrderOut.of(done.order),
            balance=BalanceOut.of(done.points),
            account=AccountOut.of(done.account),
        )

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.post(
    "/api/admin/behaviours",
    response_model=BehaviourOut,
    tags=["operator"],
    responses=documented(401, 403, 404, 409, 422, 503),
)
async def report_behaviour(
    body: BehaviourIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Report that a user did a named behaviour: the activity's rebate for it is granted once
    per `business_key`; a repeat answers `granted: false` and changes nothing."""

    async def run() -> BehaviourOut:
        done = await rebate(
            Behaviour(body.user_id, body.activity_id, body.behaviour, body.business_key),
            catalogue=raffle.catalogue,
            config=raffle.uow,
            shards=raffle.shards,
            clock=raffle.clock,
            hints=raffle.hints,
        )
        return BehaviourOut(granted=done.granted, rebate=RebateOut.of(done.order))

    return await once(request, raffle.idempotency, session.user_id, key, run)
