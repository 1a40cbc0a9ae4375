"""A recorded payment applied once: its order paid and access granted in one transaction,
or, for a duplicate, refunded through the gateway under a number made from the payment's."""

from __future__ import annotations

import json
import logging

from raffle.domain.draws import OutboxMessage
from raffle.domain.errors import Contention, RaffleError
from raffle.domain.fulfilment import AccessGrant
from raffle.domain.payments import (
    REFUND_ATTEMPTS,
    Cause,
    OrderState,
    Outcome,
    Payment,
    PaymentState,
    RefundNotFailed,
    UnknownOrder,
    UnknownPayment,
    outcome,
)
from raffle.service import flash_payments
from raffle.service.audit import record
from raffle.service.contention import retried
from raffle.service.effects import grant_access
from raffle.service.payments import Payments
from raffle.service.ports import ShardUnitOfWork

log = logging.getLogger(__name__)


async def settle(message: OutboxMessage, ctx: Payments) -> PaymentState | None:
    """Apply the `payment.notified` message's payment; None when it was applied before
    (a redelivery: nothing changes). A refund is tried at once after the commit; the
    refund job tries again what that left."""
    body = json.loads(message.payload)
    trade_no, user_id = str(body["trade_no"]), str(body["user_id"])
    await ctx.fault("payment.received")

    async def once() -> tuple[Payment, PaymentState] | None:
        async with ctx.shards.for_user(user_id) as uow:
            applied = await _apply(uow, trade_no, ctx)
            await ctx.fault("payment.before_commit")
            await uow.commit()
        return applied

    applied = await retried(once)
    if applied is None:
        return None
    payment, state = applied
    if state is PaymentState.APPLIED:
        await ctx.qr.drop(payment.out_trade_no)
        return state
    await ctx.fault("payment.before_refund")
    return await refund(payment, ctx)


async def _apply(
    uow: ShardUnitOfWork, trade_no: str, ctx: Payments
) -> tuple[Payment, PaymentState] | None:
    payment = await uow.payments.payment(trade_no)
    if payment is None:
        raise UnknownPayment(f"no payment {trade_no!r} recorded")
    if payment.state is not PaymentState.RECEIVED:
        return None
    order = await uow.payments.get(payment.out_trade_no)
    if order is None:
        raise UnknownOrder(f"no payment order {payment.out_trade_no!r}")
    grant = await uow.grants.get(order.user_id, order.content_id)
    held_elsewhere = grant is not None and grant.order_id != order.out_trade_no
    does, to, cause = outcome(order, held_elsewhere)
    now = ctx.clock.now()
    new = PaymentState.APPLIED if does is Outcome.PAY else PaymentState.REFUNDING
    # The payment first: its row lock makes a concurrent redelivery wait, then find it done.
    if not await uow.payments.settle(trade_no, PaymentState.RECEIVED, new, now):
        return None
    if to is not None and not await uow.payments.move(
        order.out_trade_no, order.state, to, cause, now, trade_no=trade_no
    ):
        # Expired or cancelled since it was read: undone whole, the message comes again.
        raise Contention(f"payment order {order.out_trade_no!r} changed meanwhile")
    kind = "payment.paid" if does is Outcome.PAY else "payment.to_refund"
    await record(uow.audit, kind, trade_no, now, details=_paid(payment))
    if does is Outcome.PAY:
        await ctx.fault("payment.paid")
        if not await flash_payments.applied(uow, order, now):  # else it pays content
            grant = AccessGrant(order.user_id, order.content_id, order.out_trade_no, now)
            await grant_access(uow, grant)
    return payment, new


def _paid(payment: Payment) -> dict[str, object]:
    return {
        "out_trade_no": payment.out_trade_no,
        "user_id": payment.user_id,
        "amount_cents": payment.amount_cents,
    }


async def refund(payment: Payment, ctx: Payments) -> PaymentState:
    """Pay the payment back at the gateway (again and again: the gateway moves the money
    once per `out_request_no`); its state after the attempt."""
    try:
        done = await ctx.gateway.refund(
            payment.out_trade_no,
            payment.amount_cents,
            payment.out_request_no,
            trade_no=payment.trade_no,
            reason="duplicate payment",
        )
    except RaffleError as error:
        return await _failed(payment, f"{error.code}: {error.message}", ctx)
    await ctx.fault("payment.refunded")  # refunded there, not yet recorded here
    now = ctx.clock.now()
    async with ctx.shards.for_user(payment.user_id) as uow:
        if await uow.payments.settle(
            payment.trade_no, PaymentState.REFUNDING, PaymentState.REFUNDED, now
        ):
            await record(uow.audit, "payment.refund", payment.trade_no, now, details=_paid(payment))
        order = await uow.payments.get(payment.out_trade_no)
        if (
            order is not None
            and order.state is OrderState.REFUNDING
            and order.trade_no == payment.trade_no
        ):
            await uow.payments.move(
                order.out_trade_no, OrderState.REFUNDING, OrderState.REFUNDED, Cause.REFUNDED, now
            )
        await uow.commit()
    log.info(
        "refunded %s of %s (fund change: %s)",
        payment.trade_no,
        payment.out_trade_no,
        done.fund_change,
    )
    return PaymentState.REFUNDED


async def _failed(payment: Payment, error: str, ctx: Payments) -> PaymentState:
    # The attempt that fails the limit parks the refund for an operator.
    state = (
        PaymentState.REFUND_FAILED
        if payment.attempts + 1 >= REFUND_ATTEMPTS
        else PaymentState.REFUNDING
    )
    async with ctx.shards.for_user(payment.user_id) as uow:
        await uow.payments.settle(
            payment.trade_no, PaymentState.REFUNDING, state, ctx.clock.now(), error=error
        )
        await uow.commit()
    log.warning("refund of %s failed (%s): %s", payment.trade_no, state, error)
    return state


async def retry_refund(
    out_trade_no: str, trade_no: str, ctx: Payments, *, by: str | None = None
) -> PaymentState:
    """An operator's retry (`by`) of a refund that failed for good: one more attempt."""
    uow = ctx.shard(out_trade_no)
    if uow is None:
        raise UnknownPayment(f"no payment {trade_no!r}")
    async with uow:
        payment = await uow.payments.payment(trade_no)
        if payment is None or payment.out_trade_no != out_trade_no:
            raise UnknownPayment(f"no payment {trade_no!r} of order {out_trade_no!r}")
        now = ctx.clock.now()
        if not await uow.payments.settle(
            trade_no, PaymentState.REFUND_FAILED, PaymentState.REFUNDING, now
        ):
            raise RefundNotFailed(f"the refund of {trade_no!r} is {payment.state}")
        details = _paid(payment)
        await record(uow.audit, "payment.refund_retry", trade_no, now, actor=by, details=details)
        await uow.commit()
    return await refund(payment, ctx)
