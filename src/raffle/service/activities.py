"""Operating activities: the review workflow, the scheduler's moves, the published odds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from fractions import Fraction

from raffle.domain.activity import Activity, IllegalTransition, due_transitions
from raffle.domain.activity import transition as next_state
from raffle.domain.caps import Cap
from raffle.domain.disclosure import DisclosedRule, disclosed_rules
from raffle.domain.draws import UnknownActivity
from raffle.domain.engine import WIN, DrawEngine
from raffle.domain.policies import PersonCaps
from raffle.domain.prize_cards import PrizeCard
from raffle.domain.prize_claims import NO_TERMS, ClaimTerms
from raffle.domain.rules import parse_lock, parse_weight_tiers
from raffle.domain.strategy import RATE_PLACES, Strategy
from raffle.service.audit import record
from raffle.service.catalogue import Catalogue
from raffle.service.ports import PrizeStock, UnitOfWork


async def stored(activity_id: int, uow: UnitOfWork) -> Activity:
    """The activity as stored, read in `uow`'s transaction; UnknownActivity if there is none."""
    activity = await uow.activities.get(activity_id)
    if activity is None:
        raise UnknownActivity(f"activity {activity_id} does not exist")
    return activity


async def change_state(
    activity_id: int, action: str, uow: UnitOfWork, *, now: datetime, by: str | None = None
) -> Activity:
    """Apply a workflow action as compare-and-set: a concurrent change makes it fail cleanly.
    `by`: the operator (None: the scheduler), for the audit log."""
    async with uow:
        activity = await stored(activity_id, uow)
        target = next_state(action, activity.state)
        if not await uow.activities.compare_and_set(activity_id, activity.state, target):
            current = await uow.activities.get(activity_id)
            raise IllegalTransition(action, current.state if current else activity.state)
        moved = {"from": activity.state.value, "to": target.value}
        await record(uow.audit, f"activity.{action}", activity_id, now, actor=by, details=moved)
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
            await change_state(activity.id, action, uow(), now=now)
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
    # Where every draw wins: its chance, the real prizes' rates renormalised over those with
    # stock left (an exact fraction); None in any other activity.
    perfect_chance: Fraction | None = None
    claim: ClaimTerms = NO_TERMS  # once won: its validity and claim conditions
    card: PrizeCard = field(default_factory=PrizeCard)  # how the board shows it


@dataclass(frozen=True, slots=True)
class PublishedOdds:
    activity: Activity
    strategy: Strategy
    prizes: tuple[PublishedPrize, ...]
    fallback_award_id: int
    fallback_rate: str  # what the prizes leave to the fallback
    fallback_title: str
    weight_tiers: dict[int, frozenset[int]]
    caps_left: dict[Cap, int | None]  # slots left of each counted cap; None: not counted yet
    person_caps: PersonCaps = field(
        default_factory=PersonCaps
    )  # per person: a win they stop is the fallback
    rules: tuple[DisclosedRule, ...] = ()  # listed users and guarantees, in the order they run
    titles: dict[int, str] = field(default_factory=dict)  # of the awards the rules name


def _perfect_chances(
    prizes: list[PublishedPrize], strategy: Strategy, engine: DrawEngine
) -> list[PublishedPrize]:
    """The prizes with their chance in an activity where every draw wins: each real prize with stock
    left at its rate over the sum of those rates (as the engine draws them)."""
    live = {
        p.award_id: strategy.prize(p.award_id).weight  # type: ignore[union-attr]
        for p in prizes
        if engine.outcome(p.award_id) == WIN and p.stock_left != 0
        and p.award_id not in engine.exhausted
    }  # fmt: skip
    total = sum(live.values())
    return [
        replace(p, perfect_chance=Fraction(live.get(p.award_id, 0), total or 1)) for p in prizes
    ]


async def published_odds(
    activity_id: int, *, catalogue: Catalogue, stock: PrizeStock, caps: PrizeStock | None = None
) -> PublishedOdds:
    """The odds and stock anyone may read: public by law for prize promotions. With them,
    the activity's caps (on the activity) and what is left of each (from `caps`)."""
    activity = await catalogue.activity(activity_id)
    engine = await catalogue.engine(activity)
    awards = await catalogue.awards()
    strategy = engine.strategy
    prizes = []
    for prize in (p for p in strategy.prizes if p.enabled):  # a disabled one is no odds
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
                claim=prize.claim,
                card=prize.card,
            )
        )
    if activity.caps.perfect:
        prizes = _perfect_chances(prizes, strategy, engine)
    remainder = strategy.remainder
    tiers = {}
    for name, value in strategy.rules:
        if name == "weight":
            tiers = parse_weight_tiers(value)
    exhausted = engine.exhausted | {p.award_id for p in prizes if p.stock_left == 0}
    rules = disclosed_rules(strategy, awards, exhausted)
    named = {a for r in rules for a in r.award_ids}
    return PublishedOdds(
        activity,
        strategy,
        tuple(prizes),
        strategy.fallback.award_id,
        str(Decimal(remainder).scaleb(-RATE_PLACES).normalize()),
        awards[strategy.fallback.award_id].title,
        tiers,
        {Cap(c): await caps.left(activity.id, c) if caps else None for c in activity.caps.limits()},
        (await catalogue.participation(activity_id)).caps,
        rules,
        {a: awards[a].title for a in named},
    )
