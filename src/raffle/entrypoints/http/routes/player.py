"""Players: activities and their published odds, my chances and prizes, drawing, history."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from raffle.domain.users import RateLimited
from raffle.entrypoints.http.deps import (
    CurrentSession,
    IdempotencyHeader,
    RaffleDep,
    get_idempotency_key,
    get_raffle,
)
from raffle.entrypoints.http.idempotent import REPLAYED
from raffle.entrypoints.http.problems import documented
from raffle.entrypoints.http.schemas import (
    AccountOut,
    ActivityOut,
    DrawOut,
    HistoryOut,
    MyPrizeOut,
    MyPrizesOut,
    MyTierOut,
    OddsOut,
    PrizeOut,
    draw_json,
)
from raffle.service.activities import published_odds
from raffle.service.draw import Draw, draw
from raffle.service.progress import my_prizes
from raffle.service.quotas import my_account
from raffle.service.wins import my_wins

router = APIRouter(prefix="/api/activities", tags=["player"])


# The hot route first: FastAPI tries the routes in order, at a cost per route tried.
@router.post(
    "/{activity_id}/draws",
    status_code=201,
    response_model=DrawOut,
    responses=documented(401, 404, 409, 422, 429, 503),
)
async def draw_once(
    activity_id: int,
    session: CurrentSession,
    request: Request,
    idempotency_key: IdempotencyHeader = None,
) -> Response:
    """Draw: one chance for one prize. Send an Idempotency-Key to make retries safe: the
    draw keeps it on its order (in the draw's own transaction), and a retry gets the same
    order back, marked `Idempotent-Replayed: true`."""
    # The key and the application by the dependencies' own functions, called here: FastAPI's
    # work per dependency is paid on every draw, the hot route.
    key = await get_idempotency_key(idempotency_key)
    raffle = await get_raffle(request)
    user_id = session.user_id
    limit = raffle.settings.draws_per_second
    if wait := await raffle.limiter.hit(f"draw:{user_id}", limit, 1):
        raise RateLimited(f"at most {limit} draws per second", wait)
    result = await draw(
        Draw(user_id, activity_id, key),
        catalogue=raffle.catalogue,
        shards=raffle.shards,
        stock=raffle.stock,
        rng=raffle.rng,
        clock=raffle.clock,
        hints=raffle.hints,
    )
    awards = await raffle.catalogue.awards()
    body = draw_json(result, awards[result.award_id])
    headers = {REPLAYED: "true"} if result.replayed else None
    return Response(body, 201, headers, media_type="application/json")


@router.get("")
async def activities(raffle: RaffleDep) -> list[ActivityOut]:
    """Every activity with its state (public)."""
    async with raffle.uow() as uow:
        return [ActivityOut.of(a) for a in await uow.activities.all()]


@router.get("/{activity_id}", responses=documented(404))
async def odds(activity_id: int, raffle: RaffleDep) -> OddsOut:
    """The activity with its published odds and stock (public; frozen once it runs)."""
    return OddsOut.of(
        await published_odds(activity_id, catalogue=raffle.catalogue, stock=raffle.stock)
    )


@router.get("/{activity_id}/account", responses=documented(401, 404))
async def account(activity_id: int, session: CurrentSession, raffle: RaffleDep) -> AccountOut:
    """My chances: total, today and this month. The first look grants the welcome pack."""
    found = await my_account(
        session.user_id,
        activity_id,
        catalogue=raffle.catalogue,
        shards=raffle.shards,
        clock=raffle.clock,
        hints=raffle.hints,
    )
    return AccountOut.of(found)


@router.get("/{activity_id}/prizes", responses=documented(401, 404))
async def prizes(activity_id: int, session: CurrentSession, raffle: RaffleDep) -> MyPrizesOut:
    """The prizes with, for me, the draws left before each unlocks, and weight-tier progress."""
    mine = await my_prizes(
        session.user_id,
        activity_id,
        catalogue=raffle.catalogue,
        shards=raffle.shards,
        stock=raffle.stock,
        clock=raffle.clock,
        hints=raffle.hints,
    )
    return MyPrizesOut(
        account=AccountOut.of(mine.account),
        prizes=[
            MyPrizeOut(**PrizeOut.of(p.prize).model_dump(), draws_to_unlock=p.draws_to_unlock)
            for p in mine.prizes
        ],
        weight_tiers=[
            MyTierOut(
                threshold=t.threshold, award_ids=list(t.award_ids), draws_to_reach=t.draws_to_reach
            )
            for t in mine.tiers
        ],
    )


@router.get("/{activity_id}/draws", responses=documented(401, 404))
async def history(
    activity_id: int,
    session: CurrentSession,
    raffle: RaffleDep,
    before: Annotated[str | None, Query(max_length=32, description="A `next` cursor.")] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> HistoryOut:
    """My draws in the activity, newest first, each with its delivery (`/api/me/prizes`
    has them in every activity)."""
    await raffle.catalogue.activity(activity_id)
    page = await my_wins(
        session.user_id,
        activity_id,
        before,
        limit,
        catalogue=raffle.catalogue,
        shards=raffle.shards,
        config=raffle.uow,
    )
    return HistoryOut(draws=[DrawOut.of_won(p) for p in page.prizes], next=page.next)
