"""Points: earning and spending them once per business number, a user's balance and
history, and exchanging points for a SKU's chances."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from raffle.domain.activity import Activity
from raffle.domain.draws import ActivityNotOpen
from raffle.domain.points import (
    InsufficientPoints,
    InvalidPoints,
    PointsAccount,
    PointsKind,
    PointsOrder,
)
from raffle.domain.quota import QuotaAccount, QuotaPack, Sku
from raffle.service import ids
from raffle.service.catalogue import Catalogue
from raffle.service.contention import retried
from raffle.service.idempotency import KeyReused
from raffle.service.ports import ChanceHints, Clock, Shards, ShardUnitOfWork, UnitOfWork
from raffle.service.quotas import credit_pack
from raffle.service.refusals import crediting
from raffle.service.sku_units import held_unit


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
    hints: ChanceHints,
) -> ExchangeResult:
    """Buy the SKU's chances with points: the points order, the debit, the top-up and the
    credit in one transaction on the user's shard. A balance that does not cover the price
    raises InsufficientPoints and changes nothing (the SKU's unit is given back)."""
    sku = await catalogue.sku(cmd.sku)
    if sku.price_points <= 0:
        raise InvalidPoints(f"SKU {sku.sku} is not sold for points")
    activity = await catalogue.activity(sku.activity_id)
    now = clock.now()
    if not activity.is_open(now):
        raise ActivityNotOpen(f"activity {activity.id} is {activity.state}, not open")
    purchase = _Purchase(
        cmd.user_id, sku, await catalogue.pack(sku.pack_id), activity,
        await catalogue.welcome(activity),
        exchange_business_no(cmd.request_key, now), now,
    )  # fmt: skip
    return await retried(lambda: _exchange(purchase, config, shards, hints, clock))


@dataclass(frozen=True, slots=True)
class _Purchase:
    user_id: str
    sku: Sku
    pack: QuotaPack
    activity: Activity
    welcome: QuotaPack | None
    business_no: str
    now: datetime

    @property
    def reason(self) -> str:
        return f"exchange sku {self.sku.sku}"


async def _exchange(
    p: _Purchase,
    config: Callable[[], UnitOfWork],
    shards: Shards,
    hints: ChanceHints,
    clock: Clock,
) -> ExchangeResult:
    async with shards.for_user(p.user_id) as uow:  # read only: a repeat, or a short balance
        if (found := await uow.points.by_business_no(p.user_id, p.business_no)) is not None:
            if found.reason != p.reason:
                raise KeyReused("this Idempotency-Key exchanged another SKU")
            return await _result(uow, p, exchanged=False)
        balance = await uow.points.account(p.user_id) or PointsAccount(p.user_id)
        if balance.available < p.sku.price_points:
            raise InsufficientPoints(
                f"SKU {p.sku.sku} costs {p.sku.price_points} points; {balance.available} available"
            )
    async with (
        held_unit(config, p.sku.sku) as hold,
        crediting(hints, [(p.user_id, p.activity.id)], clock),
        shards.for_user(p.user_id) as uow,
    ):
        spent = await spend(
            uow, user_id=p.user_id, amount=p.sku.price_points, out_business_no=p.business_no,
            reason=p.reason, now=p.now,
        )  # fmt: skip
        if not spent:
            return await _result(uow, p, exchanged=False)  # a concurrent twin got there first
        order = await uow.points.by_business_no(p.user_id, p.business_no)
        assert order is not None
        top_up_no = f"points-{order.order_id}"  # new with the points order, so never a repeat
        await credit_pack(
            uow,
            user_id=p.user_id,
            activity=p.activity,
            sku=p.sku.sku,
            pack=p.pack,
            welcome=p.welcome,
            out_business_no=top_up_no,
            now=p.now,
        )
        done = await _result(uow, p, exchanged=True)
        await uow.commit()
        hold.keep()
    return done


async def _result(uow: ShardUnitOfWork, p: _Purchase, *, exchanged: bool) -> ExchangeResult:
    order = await uow.points.by_business_no(p.user_id, p.business_no)
    assert order is not None, "an exchange always leaves its points order"
    points = await uow.points.account(p.user_id) or PointsAccount(p.user_id)
    day, month = p.activity.day(p.now), p.activity.month(p.now)
    found = await uow.quotas.get(p.user_id, p.activity.id, day, month)
    account = found or QuotaAccount(p.user_id, p.activity.id, 0, 0, 0, 0, 0, 0)
    return ExchangeResult(exchanged, order, points, account)
