"""Payment notifications (seed 000 异步通知): verified, checked against the order, recorded
with their outbox message in one transaction; `success` only after that commit."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from datetime import datetime

from raffle.domain.draws import OutboxMessage
from raffle.domain.payments import NOTIFIED, Payment, PaymentState
from raffle.service import ids
from raffle.service.payments import Payments
from raffle.service.ports.payments import InvalidNotification

log = logging.getLogger(__name__)


async def receive(form: Mapping[str, str], ctx: Payments) -> bool:
    """Whether the notification is recorded (now, or by an earlier copy of it): the
    gateway is answered `success` then, `failure` otherwise, and nothing is changed."""
    try:
        notice = ctx.gateway.verify_notification(form)
    except InvalidNotification as error:
        log.warning("notification refused: %s (%s)", error.failed, error.message)
        return False
    uow = ctx.shard(notice.out_trade_no)
    if uow is None:
        log.warning("notification refused: unknown out_trade_no %r", notice.out_trade_no)
        return False
    now = ctx.clock.now()
    async with uow:
        order = await uow.payments.get(notice.out_trade_no)
        if order is None:
            log.warning("notification refused: unknown out_trade_no %r", notice.out_trade_no)
            return False
        if notice.amount_cents != order.amount_cents:
            log.warning(
                "notification refused: %s paid %d cents, the order is %d",
                notice.out_trade_no, notice.amount_cents, order.amount_cents,
            )  # fmt: skip
            return False
        payment = Payment(
            notice.trade_no, order.out_trade_no, order.user_id, notice.amount_cents,
            PaymentState.RECEIVED, now, now,
        )  # fmt: skip
        if await uow.payments.record(payment):
            await uow.outbox.add(_message(payment, now))
        await ctx.fault("notify.before_commit")
        await uow.commit()
    await ctx.fault("notify.recorded")
    return True


def _message(payment: Payment, now: datetime) -> OutboxMessage:
    body = {
        "trade_no": payment.trade_no,
        "out_trade_no": payment.out_trade_no,
        "user_id": payment.user_id,
    }
    return OutboxMessage(ids.message_id(), NOTIFIED, payment.trade_no, json.dumps(body), now)
