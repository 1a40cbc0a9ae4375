"""The draw: a chance consumed, the strategy run, stock taken, and the result recorded."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from datetime import datetime

from raffle.domain.activity import Activity
from raffle.domain.delivery import WON
from raffle.domain.draws import (
    ActivityNotOpen,
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
from raffle.service.catalogue import Catalogue
from raffle.service.contention import retried
from raffle.service.idempotency import KeyReused
from raffle.service.ports import Clock, PrizeStock, Shards, ShardUnitOfWork


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


async def draw(
    cmd: Draw,
    *,
    catalogue: Catalogue,
    shards: Shards,
    stock: PrizeStock,
    rng: RandomSource,
    clock: Clock,
) -> DrawResult:
    """One draw for one user, in one transaction on the user's shard.

    The chance is consumed in the same transaction that records the order, the win and its
    outbox message, so a failure anywhere rolls all of them back: a chance is never lost
    and never spent twice. Consuming first also takes the user's account row lock, which
    makes one user's concurrent draws (and retries of one Idempotency-Key) take turns.
    """
    now = clock.now()
    activity = await catalogue.activity(cmd.activity_id)
    if not activity.is_open(now):
        raise ActivityNotOpen(f"activity {activity.id} is {activity.state}, not open for draws")
    engine = await catalogue.engine(activity)
    welcome = await catalogue.welcome(activity)
    await stock.prepare(activity.strategy_id)
    return await retried(lambda: _draw(cmd, activity, engine, welcome, shards, stock, rng, now))


async def _draw(
    cmd: Draw,
    activity: Activity,
    engine: DrawEngine,
    welcome: QuotaPack | None,
    shards: Shards,
    stock: PrizeStock,
    rng: RandomSource,
    now: datetime,
) -> DrawResult:
    async with shards.for_user(cmd.user_id) as uow:
        if cmd.request_key:
            uow.orders.expect(cmd.user_id, cmd.request_key)  # looked up with the chance
        account = await _consume(uow, cmd.user_id, activity, welcome, now)
        if cmd.request_key and (
            replay := await _replay(uow, cmd.user_id, activity.id, cmd.request_key)
        ):
            return replay  # leaving without commit gives the chance back
        if account is None:
            raise NoChances(f"no chances left in activity {activity.id}")
        order_id = ids.order_id(now)
        ctx = DrawContext(cmd.user_id, account.draws)
        outcome = await _take_prize(engine, ctx, order_id, stock, rng)
        try:
            await _record(uow, cmd, activity, order_id, account.draws, outcome, now)
            await uow.commit()
        except BaseException:
            if engine.needs_stock(outcome):
                # Best effort: a unit that cannot be given back shows as leaked in the
                # reconciliation report; the draw's own failure is what the caller sees.
                with contextlib.suppress(Exception):
                    await stock.give_back(activity.strategy_id, outcome.award_id, order_id)
            raise
    return DrawResult(
        order_id, activity.id, outcome.award_id, outcome.points, outcome.rule, account.draws, now
    )


async def _consume(
    uow: ShardUnitOfWork, user_id: str, activity: Activity, welcome: QuotaPack | None, now: datetime
) -> QuotaAccount | None:
    day, month = activity.periods(now)
    account = await uow.quotas.consume(user_id, activity.id, day, month)
    if account is None and welcome is not None:
        # A first visit opens the account with the welcome pack; if a concurrent request
        # opened it first, this one still draws from it.
        await uow.quotas.open(user_id, activity.id, welcome)
        account = await uow.quotas.consume(user_id, activity.id, day, month)
    return account


async def _take_prize(
    engine: DrawEngine, ctx: DrawContext, order_id: str, stock: PrizeStock, rng: RandomSource
) -> Outcome:
    outcome = engine.choose(ctx, rng)
    while engine.needs_stock(outcome) and not await stock.take(
        engine.strategy.id, outcome.award_id, order_id
    ):
        outcome = engine.on_exhausted(outcome.award_id, ctx, rng)
    return outcome


async def _record(
    uow: ShardUnitOfWork,
    cmd: Draw,
    activity: Activity,
    order_id: str,
    draw_count: int,
    outcome: Outcome,
    now: datetime,
) -> None:
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
    await uow.orders.add(order)
    await uow.wins.add(win)
    await uow.outbox.add(OutboxMessage(ids.message_id(), WON, order_id, json.dumps(payload), now))


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
