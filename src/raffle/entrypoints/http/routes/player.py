"""Players: activities and their published odds, my chances and prizes, history (the draw
itself: routes/draw.py)."""

from __future__ import annotations

from fastapi import APIRouter

from raffle.entrypoints.http.bounds import ActivityId, Cursor, Limit
from raffle.entrypoints.http.deps import CurrentSession, RaffleDep
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
)
from raffle.service.activities import published_odds
from raffle.service.progress import my_prizes
from raffle.service.quotas import my_account
from raffle.service.wins import my_wins

router = APIRouter(prefix="/api/activities", tags=["player"])


@router.get("")
async def activities(raffle: RaffleDep) -> list[ActivityOut]:
    """Every activity with its state (public)."""
    async with raffle.uow() as uow:
        return [ActivityOut.of(a) for a in await uow.activities.all()]


@router.get("/{activity_id}", responses=documented(404))
async def odds(activity_id: ActivityId, raffle: RaffleDep) -> OddsOut:
    """The activity with its published odds and stock (public; frozen once it runs)."""
    return OddsOut.of(
        await published_odds(
            activity_id, catalogue=raffle.catalogue, stock=raffle.stock, caps=raffle.caps
        )
    )


@router.get("/{activity_id}/account", responses=documented(401, 404))
async def account(
    activity_id: ActivityId, session: CurrentSession, raffle: RaffleDep
) -> AccountOut:
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
async def prizes(
    activity_id: ActivityId, session: CurrentSession, raffle: RaffleDep
) -> MyPrizesOut:
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
    activity_id: ActivityId,
    session: CurrentSession,
    raffle: RaffleDep,
    before: Cursor = None,
    limit: Limit = 20,
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
        profiles=raffle.profiles,
        clock=raffle.clock,
    )
    return HistoryOut(draws=[DrawOut.of_won(p) for p in page.prizes], next=page.next)
