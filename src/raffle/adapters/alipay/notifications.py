"""Alipay's asynchronous notifications: checked field by field, signature first."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from cryptography.hazmat.primitives.asymmetric import rsa

from raffle.adapters.alipay.fields import cents, moment, trade_status
from raffle.adapters.alipay.signing import NOTIFICATION_UNSIGNED, signing_string, verifies
from raffle.service.ports.payments import PAID, Failure, InvalidNotification, Notification

T = TypeVar("T")


def verified_notification(
    form: Mapping[str, str], alipay_key: rsa.RSAPublicKey, app_id: str, seller_id: str
) -> Notification:
    """The notification in `form` once it is Alipay's, for this app and seller, and about a
    payment; InvalidNotification naming the first field that fails otherwise."""
    signature = form.get("sign", "")
    if not signature or not verifies(
        alipay_key, signing_string(form, NOTIFICATION_UNSIGNED), signature
    ):
        raise InvalidNotification("sign", "the notification's signature does not verify")
    if form.get("app_id") != app_id:
        raise InvalidNotification("app_id", "the notification is for another app")
    if form.get("seller_id") != seller_id:
        raise InvalidNotification("seller_id", "the notification is for another seller")
    status = trade_status(form.get("trade_status"))
    if status is None or status not in PAID:
        raise InvalidNotification(
            "trade_status", f"the trade status {form.get('trade_status')!r} is not a payment"
        )
    paid = form.get("gmt_payment")
    return Notification(
        notify_id=form.get("notify_id", ""),
        out_trade_no=_required(form, "out_trade_no"),
        trade_no=_required(form, "trade_no"),
        status=status,
        amount_cents=_parsed(form, "total_amount", cents),
        notified_at=_parsed(form, "notify_time", moment),
        buyer_id=form.get("buyer_id") or form.get("buyer_open_id") or None,
        paid_at=_parsed(form, "gmt_payment", moment) if paid else None,
    )


def _required(form: Mapping[str, str], name: Failure) -> str:
    if not (value := form.get(name, "")):
        raise InvalidNotification(name, f"the notification has no {name}")
    return value


def _parsed(form: Mapping[str, str], name: Failure, parse: Callable[[str], T]) -> T:
    try:
        return parse(_required(form, name))
    except ValueError as error:
        raise InvalidNotification(name, f"the notification's {name} is malformed") from error
