"""A notification counts only when its signature, app, seller and trade status hold; each
failure names its field, and a valid one is parsed to cents and aware times."""

from __future__ import annotations

from datetime import datetime

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from raffle.adapters.alipay.fields import BEIJING
from raffle.adapters.alipay.notifications import verified_notification
from raffle.adapters.alipay.signing import NOTIFICATION_UNSIGNED, sign, signing_string
from raffle.service.ports.payments import InvalidNotification, Notification

APP_ID, SELLER_ID = "2021000000000001", "2088000000000001"


@pytest.fixture(scope="module")
def alipay() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _signed(key: rsa.RSAPrivateKey, form: dict[str, str]) -> dict[str, str]:
    unsigned = {k: v for k, v in form.items() if k != "sign"}
    return {**unsigned, "sign": sign(key, signing_string(unsigned, NOTIFICATION_UNSIGNED))}


def _form(key: rsa.RSAPrivateKey, **changes: str) -> dict[str, str]:
    form = {
        "notify_time": "2026-11-25 09:30:05",
        "notify_type": "trade_status_sync",
        "notify_id": "ac05099524730693a8b330c5ecf72da9786",
        "app_id": APP_ID,
        "charset": "utf-8",
        "version": "1.0",
        "sign_type": "RSA2",
        "trade_no": "2026112522001444231234567890",
        "out_trade_no": "P100200300",
        "buyer_id": "2088102122524333",
        "seller_id": SELLER_ID,
        "trade_status": "TRADE_SUCCESS",
        "total_amount": "12.34",
        "subject": "一篇付费文章",
        "gmt_payment": "2026-11-25 09:30:04",
    }
    return _signed(key, {**form, **changes})


def _verify(alipay: rsa.RSAPrivateKey, form: dict[str, str]) -> Notification:
    return verified_notification(form, alipay.public_key(), APP_ID, SELLER_ID)


def test_a_valid_notification_is_parsed(alipay: rsa.RSAPrivateKey) -> None:
    notification = _verify(alipay, _form(alipay))
    assert notification == Notification(
        notify_id="ac05099524730693a8b330c5ecf72da9786",
        out_trade_no="P100200300",
        trade_no="2026112522001444231234567890",
        status="TRADE_SUCCESS",
        amount_cents=1234,
        notified_at=datetime(2026, 11, 25, 9, 30, 5, tzinfo=BEIJING),
        buyer_id="2088102122524333",
        paid_at=datetime(2026, 11, 25, 9, 30, 4, tzinfo=BEIJING),
    )


def test_trade_finished_counts_as_paid(alipay: rsa.RSAPrivateKey) -> None:
    finished = _verify(alipay, _form(alipay, trade_status="TRADE_FINISHED"))
    assert finished.status == "TRADE_FINISHED"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("app_id", "2021999999999999"),
        ("seller_id", "2088999999999999"),
        ("trade_status", "TRADE_CLOSED"),
        ("total_amount", "0.01"),
        ("out_trade_no", "P999"),
        ("sign_type", "RSA"),  # not signed: changing it changes nothing
    ],
)
def test_any_field_changed_after_signing_fails_the_signature_but_sign_type(
    alipay: rsa.RSAPrivateKey, field: str, value: str
) -> None:
    form = {**_form(alipay), field: value}
    if field == "sign_type":
        assert _verify(alipay, form)
        return
    with pytest.raises(InvalidNotification) as refused:
        _verify(alipay, form)
    assert refused.value.failed == "sign"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("app_id", "2021999999999999"),
        ("seller_id", "2088999999999999"),
        ("trade_status", "TRADE_CLOSED"),
        ("trade_status", "WAIT_BUYER_PAY"),
        ("trade_status", "PAID"),
        ("total_amount", "12.345"),
        ("total_amount", "-12.34"),
        ("out_trade_no", ""),
        ("trade_no", ""),
        ("notify_time", "yesterday"),
        ("gmt_payment", "2026-13-45 00:00:00"),
    ],
)
def test_each_check_refuses_a_signed_notification_naming_its_field(
    alipay: rsa.RSAPrivateKey, field: str, value: str
) -> None:
    with pytest.raises(InvalidNotification) as refused:
        _verify(alipay, _form(alipay, **{field: value}))
    assert refused.value.failed == field
    assert refused.value.code == "invalid_notification"


def test_a_notification_signed_by_another_key_or_unsigned_fails_the_signature(
    alipay: rsa.RSAPrivateKey,
) -> None:
    forger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    unsigned = {k: v for k, v in _form(alipay).items() if k != "sign"}
    for form in (_form(forger), unsigned, {**unsigned, "sign": ""}):
        with pytest.raises(InvalidNotification) as refused:
            _verify(alipay, form)
        assert refused.value.failed == "sign"
