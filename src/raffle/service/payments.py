"""Payment orders (seed 000 支付流程): a player orders content, shows the QR, pays or cancels."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass

from raffle.domain.content import UnknownContent
from raffle.domain.errors import RaffleError
from raffle.domain.payments import (
    OPEN,
    TIMEOUT,
    Cause,
    ContentHeld,
    NotForSale,
    OrderNotOpen,
    OrderState,
    PaymentOrder,
    UnknownOrder,
    out_trade_no,
    shard_of,
    subject,
)
from raffle.service import ids
from raffle.service.delivery import Fault, no_fault
from raffle.service.ports import Clock, Shards, ShardUnitOfWork, UnitOfWork
from raffle.service.ports.payment_orders import QrCodes
from raffle.service.ports.payments import PaymentGateway

log = logging.getLogger(__name__)

QR_WAIT_SECONDS = 5.0  # how long a caller waits for the elected one's QR before making it
QR_POLL_SECONDS = 0.02


class PaymentsOff(RaffleError):
    """No payment gateway is configured (RAFFLE_ALIPAY_APP_ID unset): this deployment
    offers no payments, for good (404, not a 5xx to retry)."""

    code = "payments_unavailable"


@dataclass(frozen=True, slots=True)
class Payments:
    """What the payment use cases work with."""

    config: Callable[[], UnitOfWork]
    shards: Shards
    gateway: PaymentGateway
    qr: QrCodes
    clock: Clock
    fault: Fault = no_fault

    def shard(self, number: str) -> ShardUnitOfWork | None:
        """The unit of work on the shard an out_trade_no names; None if it names none."""
        index = shard_of(number)
        every = self.shards.every()
        return None if index is None or index >= len(every) else every[index]


async def order(user_id: str, content_id: str, ctx: Payments) -> PaymentOrder:
    """An order of the content at its price now, or the user's open order of it (one at a
    time: ordering again shows the same QR)."""
    async with ctx.config() as reader:
        content = await reader.content.get(content_id)
    if content is None or not content.visible:
        raise UnknownContent(f"no content {content_id!r} on sale")
    if content.text.price_cents < 1:
        raise NotForSale(f"content {content_id!r} has no price")
    now = ctx.clock.now()
    number = out_trade_no(ids.order_id(now), ctx.shards.index(user_id))
    new = PaymentOrder(
        number, user_id, content_id, content.text.price_cents, subject(content.text.title),
        OrderState.CREATED, now, now,
    )  # fmt: skip
    async with ctx.shards.for_user(user_id) as uow:
        if await uow.grants.get(user_id, content_id) is not None:
            raise ContentHeld(f"you hold content {content_id!r} already")
        if (found := await uow.payments.open_of(user_id, content_id)) is not None:
            return found
        if not await uow.payments.add(new):
            # A twin request made one meanwhile: its row is committed by now.
            if (found := await uow.payments.open_of(user_id, content_id)) is not None:
                return found
            raise OrderNotOpen("the open order of this content changed meanwhile", new.state)
        await uow.commit()
    return new


async def mine(user_id: str, number: str, ctx: Payments) -> PaymentOrder:
    """The user's own order (another user's is unknown to them)."""
    found = await _get(number, ctx)
    if found.user_id != user_id:
        raise UnknownOrder(f"no payment order {number!r}")
    return found


async def qr_code(user_id: str, number: str, ctx: Payments) -> str:
    """The QR content of the user's open order: from the cache, else precreated at the
    gateway by one caller only (the one whose created -> paying compare-and-set won, which
    first closes the user's other orders of the content there) while the others wait for
    it in the cache."""
    found = await mine(user_id, number, ctx)
    if not found.open:
        raise OrderNotOpen(f"payment order {number!r} is {found.state}", found.state)
    if (cached := await ctx.qr.get(number)) is not None:
        return cached
    if found.state is OrderState.CREATED and await _move(
        found, OrderState.PAYING, Cause.PRECREATED, ctx
    ):
        await _close_others(found, ctx)
        return await _precreate(found, ctx)
    waited = 0.0
    while waited < QR_WAIT_SECONDS:
        await asyncio.sleep(QR_POLL_SECONDS)
        waited += QR_POLL_SECONDS
        if (cached := await ctx.qr.get(number)) is not None:
            return cached
    # The elected caller died or the cache lost it: precreating again answers the same QR.
    return await _precreate(await mine(user_id, number, ctx), ctx)


async def cancel(user_id: str, number: str, ctx: Payments) -> PaymentOrder:
    """Close the user's open order, at the gateway first (a QR never scanned cannot be
    closed there: a payment of it still arrives, and is refunded)."""
    found = await mine(user_id, number, ctx)
    if not found.open:
        raise OrderNotOpen(f"payment order {number!r} is {found.state}", found.state)
    if found.state is OrderState.PAYING:
        await ctx.gateway.close(number)
    if not await _move(found, OrderState.CLOSED, Cause.CANCELLED, ctx):
        raise OrderNotOpen(f"payment order {number!r} changed meanwhile", found.state)
    await ctx.qr.drop(number)
    return await mine(user_id, number, ctx)


async def my_orders(
    user_id: str, shards: Shards, before: str | None, limit: int
) -> list[PaymentOrder]:
    """The user's orders, newest first (none where payments are off)."""
    async with shards.for_user(user_id) as uow:
        return await uow.payments.of_user(user_id, before, limit)


async def _precreate(found: PaymentOrder, ctx: Payments) -> str:
    left = (found.expires_at - ctx.clock.now()).total_seconds()
    if left <= 0:
        raise OrderNotOpen(f"payment order {found.out_trade_no!r} has expired", found.state)
    minutes = max(1, math.floor(left / 60))
    content = await ctx.gateway.precreate(
        found.out_trade_no, found.amount_cents, found.subject, minutes
    )
    await ctx.qr.put(found.out_trade_no, content, math.ceil(left))
    return content


async def _close_others(found: PaymentOrder, ctx: Payments) -> None:
    """Seed 000's first remedy: the user's other recent orders of the same content are
    closed at the gateway (and here, if open) before this one shows its QR, so an old QR
    scanned later is not paid."""
    async with ctx.shards.for_user(found.user_id) as uow:
        recent = await uow.payments.of_user(found.user_id, None, 20)
    since = found.created_at - TIMEOUT  # older QRs have expired at the gateway
    for other in recent:
        if other.content_id != found.content_id or other.out_trade_no == found.out_trade_no:
            continue
        if other.state in (OrderState.PAYING, OrderState.CLOSED) and other.created_at >= since:
            try:
                await ctx.gateway.close(other.out_trade_no)
            except RaffleError as error:  # paid meanwhile, or unreachable: refunded if paid
                log.warning("could not close %s at the gateway: %r", other.out_trade_no, error)
        if other.state in OPEN:
            await _move(other, OrderState.CLOSED, Cause.SUPERSEDED, ctx)
            await ctx.qr.drop(other.out_trade_no)


async def _move(found: PaymentOrder, to: OrderState, cause: Cause, ctx: Payments) -> bool:
    async with ctx.shards.for_user(found.user_id) as uow:
        moved = await uow.payments.move(found.out_trade_no, found.state, to, cause, ctx.clock.now())
        await uow.commit()
    return moved


async def _get(number: str, ctx: Payments) -> PaymentOrder:
    uow = ctx.shard(number)
    if uow is None:
        raise UnknownOrder(f"no payment order {number!r}")
    async with uow:
        found = await uow.payments.get(number)
    if found is None:
        raise UnknownOrder(f"no payment order {number!r}")
    return found
