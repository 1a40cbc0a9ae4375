"""The payment jobs: closing unpaid orders at 30 minutes, retrying refunds, reconciling with
the gateway's records; each on every shard."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import timedelta

from raffle.domain.errors import RaffleError
from raffle.domain.payments import (
    OPEN,
    TIMEOUT,
    Cause,
    Mismatch,
    OrderState,
    PaymentOrder,
    PaymentState,
    compare,
)
from raffle.service.payment_settling import refund
from raffle.service.payments import Payments
from raffle.service.ports.payments import GatewayRefused

log = logging.getLogger(__name__)

BATCH = 200  # orders or payments per shard per run
REFUND_AFTER = timedelta(seconds=30)  # a refund left this long is tried again
RECONCILE_CONCURRENCY = 8  # queries at the gateway at once
RECONCILE_LIMIT = 1_000  # the newest orders per shard a reconciliation compares


async def expire(ctx: Payments) -> int:
    """Close the orders still unpaid after TIMEOUT, at the gateway and here; how many.
    One the gateway says is paid is left for its notification."""
    closed = 0
    before = ctx.clock.now() - TIMEOUT
    for uow in ctx.shards.every():
        async with uow:
            due = await uow.payments.created_before(sorted(OPEN), before, BATCH)
        for order in due:
            if order.state is OrderState.PAYING and not await _closed_there(order, ctx):
                continue
            async with uow:
                moved = await uow.payments.move(
                    order.out_trade_no, order.state, OrderState.CLOSED, Cause.EXPIRED,
                    ctx.clock.now(),
                )  # fmt: skip
                await uow.commit()
            if moved:
                await ctx.qr.drop(order.out_trade_no)
                closed += 1
    return closed


async def _closed_there(order: PaymentOrder, ctx: Payments) -> bool:
    try:
        await ctx.gateway.close(order.out_trade_no)  # False: never scanned, nothing to close
    except GatewayRefused as refused:
        log.info("not closing %s: the gateway says %s", order.out_trade_no, refused.sub_code)
        return False
    except RaffleError as error:
        log.warning("could not close %s at the gateway: %r", order.out_trade_no, error)
        return False
    return True


async def refunds(ctx: Payments) -> int:
    """Refund again the payments whose refund was left (a crash, a gateway error); how many
    were refunded now."""
    done = 0
    before = ctx.clock.now() - REFUND_AFTER
    for uow in ctx.shards.every():
        async with uow:
            due = await uow.payments.payments_in([PaymentState.REFUNDING], before, BATCH)
        for payment in due:
            done += await refund(payment, ctx) is PaymentState.REFUNDED
    return done


@dataclass(frozen=True, slots=True)
class Reconciliation:
    checked: int
    mismatches: list[Mismatch]

    @property
    def clean(self) -> bool:
        return not self.mismatches


async def reconcile(ctx: Payments) -> Reconciliation:
    """The newest orders that reached the gateway, compared with its record of each."""
    orders: list[PaymentOrder] = []
    for uow in ctx.shards.every():
        async with uow:
            found = await uow.payments.listing(None, None, RECONCILE_LIMIT)
        orders += [o for o in found if o.state is not OrderState.CREATED]
    gate = asyncio.Semaphore(RECONCILE_CONCURRENCY)

    async def check(order: PaymentOrder) -> Mismatch | None:
        async with gate:
            trade = await ctx.gateway.query(order.out_trade_no)
        status = None if trade is None else trade.status
        cents = None if trade is None else trade.amount_cents
        kind = compare(order, status, cents)
        if kind is None:
            return None
        return Mismatch(order.out_trade_no, kind, order.state, order.amount_cents, status, cents)

    results = await asyncio.gather(*(check(o) for o in orders))
    return Reconciliation(len(orders), [m for m in results if m is not None])
