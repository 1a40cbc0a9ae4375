"""The steps of a draw (a chance consumed, the strategy run, stock taken, the result
recorded), and a draw in a transaction of its own."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from datetime import datetime

from raffle.domain.activity import Activity
from raffle.domain.delivery import WON
from raffle.domain.draws import (
    OrderState,
    OutboxMessage,
    RaffleOrder,
    Win,
)
from raffle.domain.engine import DrawEngine, Outcome
from raffle.domain.quota import NoChances, QuotaAccount, QuotaPack
from raffle.domain.randomness import RandomSource
from raffle.domain.rules import DrawContext
from raffle.service import ids
from raffle.service.contention import retried
from raffle.service.idempotency import KeyReused
from raffle.service.ports import Claim, PrizeStock, Shards, ShardUnitOfWork
from raffle.service.quotas import welcome_first


@dataclass(frozen=True, slots=True)
class Draw:
    user_id: str
    activity_id: int
    request_key: str | None = None  # the Idempotency-Key: a retry returns the first result


@dataclass(frozen=True, slots=True)
class DrawResult:
    order_id: str
    activity_id: int
    award_id: int
    points: int | None
    rule: str
    draw_count: int
    created_at: datetime
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class Attempt:
    """A draw ready to run: its activity open, its strategy compiled, its time taken."""

    cmd: Draw
    activity: Activity
    engine: DrawEngine
    welcome: QuotaPack | None  # opens the account on a first visit
    stock: PrizeStock
    rng: RandomSource
    now: datetime

    def claim(self) -> Claim:
        """What taking its chance needs, for a batch."""
        day, month = self.activity.periods(self.now)
        return self.cmd.user_id, self.activity.id, day, month, self.cmd.request_key


async def draw_alone(attempt: Attempt, shards: Shards) -> DrawResult:
    """The draw in a transaction of its own; run again if the database dropped it."""
    return await retried(lambda: _draw(attempt, shards))


async def _draw(attempt: Attempt, shards: Shards) -> DrawResult:
    cmd, activity = attempt.cmd, attempt.activity
    async with shards.for_user(cmd.user_id) as uow:
        if cmd.request_key:
            uow.orders.expect(cmd.user_id, cmd.request_key)  # looked up with the chance
        account = await _consume(uow, cmd.user_id, activity, attempt.welcome, attempt.now)
        if cmd.request_key and (
            replay := await _replay(uow, cmd.user_id, activity.id, cmd.request_key)
        ):
            return replay  # leaving without commit gives the chance back
        if account is None:
            raise no_chances(attempt)
        drawn = await take_prize(attempt, account.draws)
        try:
            await _record(uow, records(attempt, drawn))
            await uow.commit()
        except BaseException:
            await give_back_prize(attempt, drawn)
            raise
    return drawn.result(attempt)


@dataclass(frozen=True, slots=True)
class Drawn:
    """A draw's prize, its stock taken: what is recorded, and answered."""

    order_id: str
    draw_count: int  # the draws of the user in the activity, this one included
    outcome: Outcome

    def result(self, attempt: Attempt) -> DrawResult:
        o = self.outcome
        return DrawResult(
            self.order_id, attempt.activity.id, o.award_id, o.points, o.rule, self.draw_count,
            attempt.now,
        )  # fmt: skip


def no_chances(attempt: Attempt) -> NoChances:
    return NoChances(f"no chances left in activity {attempt.activity.id}")


async def _consume(
    uow: ShardUnitOfWork, user_id: str, activity: Activity, welcome: QuotaPack | None, now: datetime
) -> QuotaAccount | None:
    day, month = activity.periods(now)
    account = await uow.quotas.consume(user_id, activity.id, day, month)
    if account is None and welcome is not None:
        # A first visit opens the account with the welcome pack; if a concurrent request
        # opened it first, this one still draws from it.
        await welcome_first(uow, user_id, activity, welcome, now)
        account = await uow.quotas.consume(user_id, activity.id, day, month)
    return account


async def take_prize(attempt: Attempt, draw_count: int) -> Drawn:
    """The strategy run for the user's `draw_count`th draw, and the prize's stock taken."""
    engine, rng, stock = attempt.engine, attempt.rng, attempt.stock
    ctx = DrawContext(attempt.cmd.user_id, draw_count)
    order_id = ids.order_id(attempt.now)
    outcome = engine.choose(ctx, rng)
    while engine.needs_stock(outcome) and not await stock.take(
        engine.strategy.id, outcome.award_id, order_id
    ):
        outcome = engine.on_exhausted(outcome.award_id, ctx, rng)
    return Drawn(order_id, draw_count, outcome)


async def give_back_prize(attempt: Attempt, drawn: Drawn) -> None:
    """The stock taken for a draw that did not commit, given back.

    Best effort: a unit that cannot be given back shows as leaked in the reconciliation
    report; the draw's own failure is what the caller sees."""
    if attempt.engine.needs_stock(drawn.outcome):
        with contextlib.suppress(Exception):
            await attempt.stock.give_back(
                attempt.activity.strategy_id, drawn.outcome.award_id, drawn.order_id
            )


async def _record(uow: ShardUnitOfWork, rows: tuple[RaffleOrder, Win, OutboxMessage]) -> None:
    order, win, message = rows
    await uow.orders.add(order)
    await uow.wins.add(win)
    await uow.outbox.add(message)


def records(attempt: Attempt, drawn: Drawn) -> tuple[RaffleOrder, Win, OutboxMessage]:
    """The draw's order, its win, and the win's outbox message."""
    cmd, activity, now = attempt.cmd, attempt.activity, attempt.now
    order_id, draw_count, outcome = drawn.order_id, drawn.draw_count, drawn.outcome
    order = RaffleOrder(
        order_id,
        cmd.user_id,
        activity.id,
        activity.strategy_id,
        draw_count,
        OrderState.USED,
        now,
        cmd.request_key,
    )
    win = Win(
        order_id,
        cmd.user_id,
        activity.id,
        activity.strategy_id,
        outcome.award_id,
        outcome.points,
        outcome.rule,
        now,
    )
    payload = {
        "order_id": order_id,
        "user_id": cmd.user_id,
        "activity_id": activity.id,
        "strategy_id": activity.strategy_id,
        "award_id": outcome.award_id,
        "points": outcome.points,
        "created_at": now.isoformat(),
    }
    return order, win, OutboxMessage(ids.message_id(), WON, order_id, json.dumps(payload), now)


async def _replay(
    uow: ShardUnitOfWork, user_id: str, activity_id: int, request_key: str
) -> DrawResult | None:
    order = await uow.orders.by_request(user_id, request_key)
    if order is None:
        return None
    if order.activity_id != activity_id:
        raise KeyReused("this Idempotency-Key was used for a draw in another activity")
    win = await uow.wins.get(order.order_id)
    assert win is not None, "an order is always written with its win"
    return DrawResult(
        order.order_id,
        order.activity_id,
        win.award_id,
        win.points,
        win.rule,
        order.draw_count,
        order.created_at,
        replayed=True,
    )
