"""The draw: a chance consumed, the strategy run, stock taken, and the result recorded."""

from __future__ import annotations

from raffle.domain.delivery import WON
from raffle.domain.draws import ActivityNotOpen
from raffle.domain.quota import NoChances
from raffle.domain.randomness import RandomSource
from raffle.service.catalogue import Catalogue
from raffle.service.draw_batch import draw_in_batch
from raffle.service.drawing import Attempt, Draw, DrawResult, draw_alone
from raffle.service.ports import ChanceHints, Clock, PrizeStock, Shards
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
) -> DrawResult:
    """One draw for one user, in one transaction on the user's shard.

    The chance is consumed in the same transaction that records the order, the win and its
    outbox message, so a failure anywhere rolls all of them back: a chance is never lost
    and never spent twice. Consuming first also takes the user's account row lock, which
    makes one user's concurrent draws (and retries of one Idempotency-Key) take turns.

    Where the shards can (PostgreSQL), that transaction is shared with the draws of other
    users on the same database that arrived while the previous one was in flight (group
    commit, see draw_batch): the same steps, each statement carrying the whole batch.

    A user the database just found without a chance is refused from the hints, without a
    transaction (service/refusals.py).
    """
    now = clock.now()
    activity = await catalogue.activity(cmd.activity_id)
    if not activity.is_open(now):
        raise ActivityNotOpen(f"activity {activity.id} is {activity.state}, not open for draws")
    engine = await catalogue.engine(activity)
    welcome = await catalogue.welcome(activity)
    refusal = await look(hints, cmd.user_id, activity, welcome, cmd.request_key, now)
    await stock.prepare(activity.strategy_id)
    attempt = Attempt(cmd, activity, engine, welcome, stock, rng, now)
    try:
        if shards.batches is None:
            return await draw_alone(attempt, shards)
        return await draw_in_batch(attempt, shards, shards.batches)
    except NoChances:
        await refusal.noted()
        raise
