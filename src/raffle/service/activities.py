"""Operating activities: the review workflow, the scheduler's moves, the published odds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal

from raffle.domain.activity import Activity, IllegalTransition, due_transitions
from raffle.domain.activity import transition as next_state
from raffle.domain.draws import UnknownActivity
from raffle.domain.policies import Caps
from raffle.domain.rules import parse_lock, parse_weight_tiers
from raffle.domain.strategy import RATE_PLACES, Strategy
from raffle.service.catalogue import Catalogue
from raffle.service.ports import PrizeStock, UnitOfWork


async def change_state(activity_id: int, action: str, uow: UnitOfWork) -> Activity:
    """Apply a workflow action as compare-and-set: a concurrent change makes it fail cleanly."""
    async with uow:
        activity = await uow.activities.get(activity_id)
        if activity is None:
            raise UnknownActivity(f"activity {activity_id} does not exist")
        target = next_state(action, activity.state)
        if not await uow.activities.compare_and_set(activity_id, activity.state, target):
            current = await uow.activities.get(activity_id)
            raise IllegalTransition(action, current.state if current else activity.state)
        await uow.commit()
    return replace(activity, state=target)


async def advance(uow: Callable[[], UnitOfWork], now: datetime) -> list[tuple[int, str]]:
    """The scheduler's tick: start approved activities whose window opened, close running
    ones whose window ended. Safe to run from several processes: each move is a CAS."""
    async with uow() as reader:
        activities = await reader.activities.all()
    moved = []
    for activity in activities:
        if (action := due_transitions(activity, now)) is None:
            continue
        try:
            await change_state(activity.id, action, uow())
        except IllegalTransition:
            continue  # another process moved it first
        moved.append((activity.id, action))
    return moved


@dataclass(frozen=True, slots=True)
class PublishedPrize:
    award_id: int
    title: str
    rate: str  # exact decimal text, as configured
    stock: int | None
    stock_left: int | None
    lock_after: int | None  # the draw count from which it can be won


@dataclass(frozen=True, slots=True)
class PublishedOdds:
    activity: Activity
    strategy: Strategy
    prizes: tuple[PublishedPrize, ...]
    fallback_award_id: int
    fallback_rate: str  # what the prizes leave to the fallback
    fallback_title: str
    weight_tiers: dict[int, frozenset[int]]
    caps: Caps = field(default_factory=Caps)  # per person: a win they stop is the fallback


async def published_odds(
    activity_id: int, *, catalogue: Catalogue, stock: PrizeStock
) -> PublishedOdds:
    """The odds and stock anyone may read: public by law for prize promotions."""
    activity = await catalogue.activity(activity_id)
    engine = await catalogue.engine(activity)
    awards = await catalogue.awards()
    strategy = engine.strategy
    prizes = []
    for prize in strategy.prizes:
        locks = [parse_lock(v) for name, v in prize.rules if name == "lock"]
        left = await stock.left(strategy.id, prize.award_id) if prize.stock is not None else None
        if left is None and prize.stock is not None:
            left = 0 if prize.award_id in engine.exhausted else None
        prizes.append(
            PublishedPrize(
                prize.award_id,
                awards[prize.award_id].title,
                str(prize.rate),
                prize.stock,
                left,
                max(locks) if locks else None,
            )
        )
    remainder = strategy.remainder
    tiers = {}
    for name, value in strategy.rules:
        if name == "weight":
            tiers = parse_weight_tiers(value)
    return PublishedOdds(
        activity,
        strategy,
        tuple(prizes),
        strategy.fallback.award_id,
        str(Decimal(remainder).scaleb(-RATE_PLACES).normalize()),
        awards[strategy.fallback.award_id].title,
        tiers,
        (await catalogue.participation(activity_id)).caps,
    )
