"""A flash sale's order priced in cents, paid through a payment order (issue 15's) for it."""

from __future__ import annotations

import json
import logging
from datetime import datetime

from raffle.domain.draws import OutboxMessage
from raffle.domain.errors import RaffleError
from raffle.domain.flash_sales import (
    PAID,
    NothingToPay,
    OrderState,
    SaleOrder,
    paid_for,
    paying_for,
)
from raffle.domain.payments import OPEN, Cause, PaymentOrder, out_trade_no, subject
from raffle.domain.payments import OrderState as PaymentState
from raffle.service import ids
from raffle.service.flash_delivery import deliver_sold
from raffle.service.flash_sales import FlashSales
from raffle.service.payments import Payments
from raffle.service.ports import ShardUnitOfWork

log = logging.getLogger(__name__)

RECENT = 50  # a user's payment orders looked through for one of a flash order


async def pay(user_id: str, sale_id: int, sales: FlashSales, ctx: Payments) -> PaymentOrder:
    """The payment order of the user's order waiting for payment in the sale: made at the
    order's price, or the open one made before (its QR the same, as for content)."""
    sale = await sales.sale(sale_id)
    waiting = [o for o in await sales.store.of_user(sale_id, user_id) if _waits(o, sales)]
    if not waiting:
        raise NothingToPay(f"no order of flash sale {sale_id} waits for your payment")
    order, content_id = waiting[-1], paying_for(waiting[-1].order_id)
    now = ctx.clock.now()
    number = out_trade_no(ids.order_id(now), ctx.shards.index(user_id))
    new = PaymentOrder(
        number, user_id, content_id, order.price, subject(sale.name),
        PaymentState.CREATED, now, now,
    )  # fmt: skip
    async with ctx.shards.for_user(user_id) as uow:
        if (found := await uow.payments.open_of(user_id, content_id)) is not None:
            return found
        if not await uow.payments.add(new):  # a twin request made one meanwhile
            if (found := await uow.payments.open_of(user_id, content_id)) is not None:
                return found
            raise NothingToPay(f"the payment of {order.order_id} changed meanwhile")
        await uow.commit()
    return new


def _waits(order: SaleOrder, sales: FlashSales) -> bool:
    now = sales.clock.now()
    return order.state is OrderState.AWAITING_PAYMENT and (
        order.expires_at is None or now < order.expires_at
    )


async def applied(uow: ShardUnitOfWork, order: PaymentOrder, now: datetime) -> bool:
    """In the transaction that applies a payment of `order`: when it pays for a flash sale
    order, the `flash.paid` message that makes that order final (False: it pays content)."""
    paid = paid_for(order.content_id)
    if paid is None:
        return False
    body = {"order_id": paid, "user_id": order.user_id, "out_trade_no": order.out_trade_no}
    await uow.outbox.add(OutboxMessage(ids.message_id(), PAID, paid, json.dumps(body), now))
    return True


async def settle_paid(message: OutboxMessage, sales: FlashSales) -> None:
    """The `flash.paid` consumer: the order done and what it bought delivered, each once
    however often the message comes. An order expired first is left so (its payment
    orders were closed before it expired, so the payment is refunded: `unpaid`)."""
    body = json.loads(message.payload)
    user_id, order_id = str(body["user_id"]), str(body["order_id"])
    order = await _order(sales, user_id, order_id)
    state = None if order is None else await sales.store.pay(order, sales.clock.now())
    if order is None or state is not OrderState.DONE:
        log.error("flash order %s was paid but is %s", order_id, state)
        return
    sale = await sales.sale(order.sale_id)
    await deliver_sold(sales.shards, sale, order.order_id, user_id, sales.clock.now())


async def unpaid(order: SaleOrder, ctx: Payments) -> bool:
    """Before an order past its window expires: its open payment orders closed (at the
    gateway first, as a cancel does; a payment arriving later finds them closed and is
    refunded). False when one was paid: the order is final, not expired."""
    content_id = paying_for(order.order_id)
    async with ctx.shards.for_user(order.user_id) as uow:
        recent = await uow.payments.of_user(order.user_id, None, RECENT)
    for found in (p for p in recent if p.content_id == content_id):
        if found.state in OPEN and not await _close(found, ctx):
            return False
        if found.state is PaymentState.PAID:
            return False
    return True


async def _close(found: PaymentOrder, ctx: Payments) -> bool:
    """False when the order left its open state meanwhile by being paid."""
    if found.state is PaymentState.PAYING:
        try:
            await ctx.gateway.close(found.out_trade_no)
        except RaffleError as error:  # paid meanwhile, or unreachable: refunded if paid
            log.warning("could not close %s at the gateway: %r", found.out_trade_no, error)
    async with ctx.shards.for_user(found.user_id) as uow:
        closed = await uow.payments.move(
            found.out_trade_no, found.state, PaymentState.CLOSED, Cause.EXPIRED, ctx.clock.now()
        )
        now_state = None if closed else await uow.payments.get(found.out_trade_no)
        await uow.commit()
    await ctx.qr.drop(found.out_trade_no)
    return closed or now_state is None or now_state.state is not PaymentState.PAID


async def _order(sales: FlashSales, user_id: str, order_id: str) -> SaleOrder | None:
    sale_id = int(order_id.removeprefix("fs").split("-", 1)[0])
    mine = await sales.store.of_user(sale_id, user_id)
    return next((o for o in mine if o.order_id == order_id), None)
