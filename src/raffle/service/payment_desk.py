"""What operators see of payments: orders in every shard, an order's history and payments,
refunds that failed for good."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from raffle.domain.payments import (
    Change,
    OrderState,
    Payment,
    PaymentOrder,
    PaymentState,
    UnknownOrder,
)
from raffle.service.payments import Payments


@dataclass(frozen=True, slots=True)
class OrderFile:
    order: PaymentOrder
    history: list[Change]
    payments: list[Payment]


async def orders(ctx: Payments, state: OrderState | None, limit: int) -> list[PaymentOrder]:
    """The newest orders of every shard (in `state` if given), newest first."""
    found: list[PaymentOrder] = []
    for uow in ctx.shards.every():
        async with uow:
            found += await uow.payments.listing(state, None, limit)
    return sorted(found, key=lambda o: o.created_at, reverse=True)[:limit]


async def order_file(out_trade_no: str, ctx: Payments) -> OrderFile:
    uow = ctx.shard(out_trade_no)
    if uow is None:
        raise UnknownOrder(f"no payment order {out_trade_no!r}")
    async with uow:
        found = await uow.payments.get(out_trade_no)
        if found is None:
            raise UnknownOrder(f"no payment order {out_trade_no!r}")
        history = await uow.payments.history(out_trade_no)
        payments = await uow.payments.payments_of(out_trade_no)
    return OrderFile(found, history, payments)


async def refunds(ctx: Payments, state: PaymentState, limit: int = 100) -> list[Payment]:
    """Payments in `state` (refunding, refunded, refund_failed), oldest change first."""
    found: list[Payment] = []
    until = ctx.clock.now() + timedelta(seconds=1)
    for uow in ctx.shards.every():
        async with uow:
            found += await uow.payments.payments_in([state], until, limit)
    return sorted(found, key=lambda p: p.updated_at)[:limit]
