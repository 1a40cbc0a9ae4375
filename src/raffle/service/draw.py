"""The draw: a chance consumed, the strategy run, stock taken, and the result recorded."""

from __future__ import annotations

from raffle.domain.delivery import WON
from raffle.domain.draws import ActivityNotOpen
from raffle.domain.quota import NoChances
from raffle.domain.randomness import RandomSource
from raffle.domain.scheduled import DrawsAtSetTime
from raffle.service.catalogue import Catalogue
from raffle.service.draw_checks import DrawChecks
from raffle.service.fairness import SeedBook
from raffle.service.participation import enter
from raffle.service.ports import (
    UNMEASURED,
    Attempt,
    ChanceHints,
    Clock,
    Draw,
    DrawResult,
    Metrics,
    PrizeStock,
    Shards,
)
from raffle.service.ports.audiences import Audience, Profiles
from raffle.service.refusals import look

__all__ = ["WON", "Draw", "DrawResult", "draw"]


async def draw(
    cmd: Draw,
    *,
    catalogue: Catalogue,
    shards: Shards,
    stock: PrizeStock,
    rng: RandomSource,
    clock: Clock,
    hints: ChanceHints,
    metrics: Metrics = UNMEASURED,
    profiles: Profiles | None = None,
    audience: Audience | None = None,
    caps: PrizeStock | None = None,
    checks: DrawChecks | None = None,
    ip: str | None = None,
    seeds: SeedBook | None = None,
) -> DrawResult:
    """One draw for one user, in one transaction on the user's shard.

    The chance is consumed in the same transaction that records the order, the win and its
    outbox message, so a failure anywhere rolls all of them back: a chance is never lost
    and never spent twice. The backend's draw store runs it (see DrawStore): on every SQL
    backend that transaction is shared with other users' draws on the same database
    (draw_batch).

    A user the database just found without a chance is refused from the hints, without a
    transaction (service/refusals.py). `metrics` counts committed draws and those refusals.

    An activity's participation policies and caps are looked at before the transaction
    where they can be (the user's audiences and level, through `profiles` and `audience`),
    and counted in it (service/participation.py); a user no policy admits is refused
    (NotAdmitted) and keeps the chance.

    `caps` counts the activity-wide caps (service/caps.py) of the activities that have them.

    The checks before the transaction, in this order and only here: `checks.standing` (deny
    lists, an operator's pause; `ip` is the client's address), the activity open, the
    fast-refusal look, `checks.rate` (the rate limit, counting only the draws the look lets
    through), `checks.activity` (the join code, which may read the database), the
    participation policies. Without `checks` (the tests of the draw itself) only the
    activity, the look and the policies.
    With `seeds`, the draw's randomness comes from the period's committed seed and the
    user's client seed, and its result carries a receipt (service/fairness.py).
    """
    now = clock.now()
    if checks is not None:
        await checks.standing(cmd.user_id, cmd.activity_id, ip)
    activity = await catalogue.activity(cmd.activity_id)
    if not activity.is_open(now):
        raise ActivityNotOpen(f"activity {activity.id} is {activity.state}, not open for draws")
    if activity.schedule is not None:
        raise DrawsAtSetTime(f"activity {activity.id} picks its winners at its draw time: enter")
    engine = await catalogue.engine(activity)
    welcome = await catalogue.welcome(activity)
    try:
        refusal = await look(hints, cmd.user_id, activity, welcome, cmd.request_key, now)
    except NoChances:
        metrics.refused_fast()
        raise
    if checks is not None:
        await checks.rate(cmd.user_id)
        await checks.activity(activity, cmd.user_id)
    participation = await catalogue.participation(activity.id)
    entry = await enter(participation, cmd.user_id, activity, now, profiles, audience)
    await stock.prepare(activity.strategy_id)
    if caps is not None and activity.caps.counted:
        await caps.prepare(activity.id)
    fair = None if seeds is None else await seeds.in_force(activity, engine, cmd.user_id, now)
    attempt = Attempt(cmd, activity, engine, welcome, stock, rng, now, caps, entry, fair)
    try:
        result = await shards.draws.run(attempt)
    except NoChances:
        await refusal.noted()
        raise
    if not result.replayed:
        metrics.drawn(activity.id, engine.outcome(result.award_id))
    return result
