"""Points: earning and spending them once per business number, a user's balance and
history, and exchanging points for a SKU's chances."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from raffle.domain.draws import ActivityNotOpen
from raffle.domain.errors import Contention
from raffle.domain.points import (
    InsufficientPoints,
    InvalidPoints,
    PointsAccount,
    PointsKind,
    PointsOrder,
)
from raffle.domain.quota import QuotaAccount
from raffle.service import ids
from raffle.service.catalogue import Catalogue
from raffle.service.idempotency import KeyReused
from raffle.service.ports import Clock, Shards, ShardUnitOfWork, UnitOfWork
from raffle.service.quotas import credit_sku, welcome_first
from raffle.service.sku_units import held_unit

T = TypeVar("T")
ATTEMPTS = 3  # a transaction the database dropped to break a deadlock is run again


async def earn(
    uow: ShardUnitOfWork,
    *,
    user_id: str,
    amount: int,
    out_business_no: str,
    reason: str,
    now: datetime,
) -> bool:
    """Add `amount` points inside the caller's open shard transaction (the caller commits);
    False, and nothing changed, when this user's `out_business_no` was applied before."""
    order = PointsOrder(
        ids.order_id(now), user_id, PointsKind.EARN, amount, out_business_no, reason, now
    )
    return await uow.points.add(order)


async def spend(
    uow: ShardUnitOfWork,
    *,
    user_id: str,
    amount: int,
    out_business_no: str,
    reason: str,
    now: datetime,
) -> bool:
    """Take `amount` points inside the caller's open shard transaction; False when this
    `out_business_no` was applied before. Raises InsufficientPoints, with nothing changed,
    when the balance does not cover it."""
    order = PointsOrder(
        ids.order_id(now), user_id, PointsKind.SPEND, amount, out_business_no, reason, now
    )
    return await uow.points.add(order)


@dataclass(frozen=True, slots=True)
class MyPoints:
    account: PointsAccount
    orders: list[PointsOrder]
    next: str | None  # the cursor of the next (older) page


async def my_points(user_id: str, *, shards: Shards, before: str | None, limit: int) -> MyPoints:
    async with shards.for_user(user_id) as uow:
        account = await uow.points.account(user_id) or PointsAccount(user_id)
        rows = await uow.points.history(user_id, before, limit + 1)
    page = rows[:limit]
    return MyPoints(account, page, page[-1].order_id if len(rows) > limit else None)


@dataclass(frozen=True, slots=True)
class Exchange:
    user_id: str
    sku: int
    request_key: str | None = None  # the Idempotency-Key: the same key exchanges once


@dataclass(frozen=True, slots=True)
class ExchangeResult:
    exchanged: bool  # False: this request was exchanged before; nothing changed now
    order: PointsOrder
    points: PointsAccount
    account: QuotaAccount


def exchange_business_no(request_key: str | None, now: datetime) -> str:
    """The points order's `out_business_no`: from the Idempotency-Key (hashed to fit), so a
    retry finds the first exchange even if the HTTP replay record is gone."""
    if request_key is None:
        return f"exchange-{ids.order_id(now)}"
    return f"exchange-{hashlib.sha256(request_key.encode()).hexdigest()[:40]}"


async def exchange(
    cmd: Exchange,
    *,
    catalogue: Catalogue,
    config: Callable[[], UnitOfWork],
    shards: Shards,
    clock: Clock,
) -> ExchangeResult:
    """Buy the SKU's chances with points: the points order, the debit, the top-up and the
    credit in one transaction on the user's shard. A balance that does not cover the price
    raises InsufficientPoints and changes nothing (the SKU's unit is given back)."""
    sku = await catalogue.sku(cmd.sku)
    if sku.price_points <= 0:
        raise InvalidPoints(f"SKU {sku.sku} is not sold for points")
    pack = await catalogue.pack(sku.pack_id)
    activity = await catalogue.activity(sku.activity_id)
    welcome = await catalogue.pack(activity.welcome_pack) if activity.welcome_pack else None
    now = clock.now()
    if not activity.is_open(now):
        raise ActivityNotOpen(f"activity {activity.id} is {activity.state}, not open")
    business_no = exchange_business_no(cmd.request_key, now)
    reason = f"exchange sku {sku.sku}"
    day, month = activity.day(now), activity.month(now)

    async def result(uow: ShardUnitOfWork, exchanged: bool) -> ExchangeResult:
        order = await uow.points.by_business_no(cmd.user_id, business_no)
        assert order is not None, "an exchange always leaves its points order"
        points = await uow.points.account(cmd.user_id) or PointsAccount(cmd.user_id)
        found = await uow.quotas.get(cmd.user_id, activity.id, day, month)
        account = found or QuotaAccount(cmd.user_id, activity.id, 0, 0, 0, 0, 0, 0)
        return ExchangeResult(exchanged, order, points, account)

    async def once() -> ExchangeResult:
        async with shards.for_user(cmd.user_id) as uow:  # read only: repeats and the balance
            if found := await uow.points.by_business_no(cmd.user_id, business_no):
                if found.reason != reason:
                    raise KeyReused("this Idempotency-Key exchanged another SKU")
                return await result(uow, False)
            balance = await uow.points.account(cmd.user_id)
            if balance is None or balance.available < sku.price_points:
                raise InsufficientPoints(
                    f"SKU {sku.sku} costs {sku.price_points} points; "
                    f"{balance.available if balance else 0} available"
                )
        async with held_unit(config, sku.sku) as hold, shards.for_user(cmd.user_id) as uow:
            spent = await spend(
                uow,
                user_id=cmd.user_id,
                amount=sku.price_points,
                out_business_no=business_no,
                reason=reason,
                now=now,
            )
            if not spent:  # a concurrent retry of this key got there first
                return await result(uow, False)
            order = await uow.points.by_business_no(cmd.user_id, business_no)
            assert order is not None
            await welcome_first(uow, cmd.user_id, activity, welcome, now)
            credited = await credit_sku(
                uow, cmd.user_id, sku, pack, activity, f"points-{order.order_id}", now
            )
            assert credited, "a new points order's top-up number is new too"
            done = await result(uow, True)
            await uow.commit()
            hold.keep()
        return done

    return await retried(once)


async def retried(run: Callable[[], Awaitable[T]]) -> T:
    """`run()`, again when the database dropped it to break a deadlock (it changed nothing)."""
    for _ in range(ATTEMPTS - 1):
        try:
            return await run()
        except Contention:
            continue
    return await run()
