"""Alipay's open API for face-to-face (QR) payment: precreate, query, close and refund."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from cryptography.hazmat.primitives.asymmetric import rsa

from raffle.adapters.alipay.answers import Answer, answer
from raffle.adapters.alipay.fields import beijing, cents, moment, trade_status, yuan
from raffle.adapters.alipay.notifications import verified_notification
from raffle.adapters.alipay.signing import sign, signing_string, verifies
from raffle.service.ports import Clock
from raffle.service.ports.payments import (
    GatewayRefused,
    GatewayUnavailable,
    Notification,
    Refund,
    Trade,
    TradeStatus,
)

SUCCESS = "10000"
# Codes after which the call's effect is unknown and a retry is safe: the service was busy
# (20000), or it reported a system error of its own.
_RETRYABLE_CODES = frozenset({"20000"})
_RETRYABLE_SUB_CODES = frozenset({"ACQ.SYSTEM_ERROR", "aop.ACQ.SYSTEM_ERROR", "isp.unknow-error"})
_NO_TRADE = "ACQ.TRADE_NOT_EXIST"
_SIGNED_CODES = frozenset({SUCCESS, "40004"})


@dataclass(frozen=True, slots=True)
class Merchant:
    """Who calls: the app, its seller (partner) id, its key, and Alipay's key to trust."""

    app_id: str
    seller_id: str
    private_key: rsa.RSAPrivateKey
    alipay_public_key: rsa.RSAPublicKey
    notify_url: str | None = None


class AlipayGateway:
    """The PaymentGateway on Alipay's open API (or anything speaking it, as the simulator)."""

    def __init__(self, merchant: Merchant, url: str, client: httpx.AsyncClient, clock: Clock):
        self.merchant = merchant
        self.url = url
        self.client = client
        self.clock = clock

    async def precreate(
        self, out_trade_no: str, amount_cents: int, subject: str, timeout_minutes: int
    ) -> str:
        fields = await self._call(
            "alipay.trade.precreate",
            {
                "out_trade_no": out_trade_no,
                "total_amount": yuan(amount_cents),
                "subject": subject,
                "timeout_express": f"{timeout_minutes}m",
            },
            notify=True,
        )
        with _reading("alipay.trade.precreate"):
            return str(fields["qr_code"])

    async def query(self, out_trade_no: str) -> Trade | None:
        try:
            fields = await self._call("alipay.trade.query", {"out_trade_no": out_trade_no})
        except GatewayRefused as refused:
            if refused.sub_code == _NO_TRADE:
                return None
            raise
        paid = fields.get("send_pay_date")
        with _reading("alipay.trade.query"):
            return Trade(
                out_trade_no=str(fields["out_trade_no"]),
                trade_no=str(fields["trade_no"]),
                status=_status(fields["trade_status"]),
                amount_cents=cents(str(fields["total_amount"])),
                buyer_id=fields.get("buyer_user_id") or fields.get("buyer_open_id"),
                buyer_logon_id=fields.get("buyer_logon_id"),
                paid_at=moment(paid) if paid else None,
            )

    async def close(self, out_trade_no: str) -> bool:
        try:
            await self._call("alipay.trade.close", {"out_trade_no": out_trade_no})
        except GatewayRefused as refused:
            if refused.sub_code == _NO_TRADE:
                return False
            raise
        return True

    async def refund(
        self,
        out_trade_no: str,
        amount_cents: int,
        out_request_no: str,
        *,
        trade_no: str | None = None,
        reason: str = "",
    ) -> Refund:
        content = {
            "out_trade_no": out_trade_no,
            "refund_amount": yuan(amount_cents),
            "out_request_no": out_request_no,
        }
        if trade_no:
            content["trade_no"] = trade_no
        if reason:
            content["refund_reason"] = reason
        fields = await self._call("alipay.trade.refund", content)
        refunded = fields.get("gmt_refund_pay")
        with _reading("alipay.trade.refund"):
            return Refund(
                out_trade_no=str(fields["out_trade_no"]),
                trade_no=str(fields["trade_no"]),
                out_request_no=out_request_no,
                refunded_cents=cents(str(fields["refund_fee"])),
                fund_change=fields.get("fund_change") == "Y",
                refunded_at=moment(refunded) if refunded else None,
            )

    def verify_notification(self, form: Mapping[str, str]) -> Notification:
        m = self.merchant
        return verified_notification(form, m.alipay_public_key, m.app_id, m.seller_id)

    async def _call(
        self, method: str, content: Mapping[str, str], *, notify: bool = False
    ) -> dict[str, Any]:
        """The verified answer's fields when its code is success; the error otherwise."""
        params = self._params(method, content, notify=notify)
        try:
            response = await self.client.post(self.url, data=params)
        except httpx.HTTPError as error:
            raise GatewayUnavailable(f"{method}: {type(error).__name__}: {error}") from error
        if response.status_code != 200:
            raise GatewayUnavailable(f"{method}: HTTP {response.status_code}")
        try:
            found = answer(response.text, method)
        except ValueError as error:
            raise GatewayUnavailable(
                f"{method}: an answer that is not Alipay's: {error}"
            ) from error
        return self._checked(method, found)

    def _params(self, method: str, content: Mapping[str, str], *, notify: bool) -> dict[str, str]:
        params = {
            "app_id": self.merchant.app_id,
            "method": method,
            "format": "JSON",
            "charset": "utf-8",
            "sign_type": "RSA2",
            "timestamp": beijing(self.clock.now()),
            "version": "1.0",
            "biz_content": json.dumps(content, ensure_ascii=False, separators=(",", ":")),
        }
        if notify and self.merchant.notify_url:
            params["notify_url"] = self.merchant.notify_url
        params["sign"] = sign(self.merchant.private_key, signing_string(params))
        return params

    def _checked(self, method: str, found: Answer) -> dict[str, Any]:
        fields, code = found.fields, str(found.fields.get("code", ""))
        # An authentication error may come unsigned (Alipay signs no answer to a request it
        # could not authenticate); a success or a business answer (40004: no such trade,
        # already paid…) is acted on, so it must carry a signature that verifies.
        if found.sign is None and code in _SIGNED_CODES:
            raise GatewayUnavailable(f"{method}: an unsigned answer")
        if found.sign is not None and not verifies(
            self.merchant.alipay_public_key, found.text, found.sign
        ):
            raise GatewayUnavailable(f"{method}: the answer's signature does not verify")
        if code == SUCCESS:
            return fields
        sub_code = str(fields.get("sub_code", ""))
        message = f"{method}: {code} {fields.get('msg', '')} {sub_code} {fields.get('sub_msg', '')}"
        if code in _RETRYABLE_CODES or sub_code in _RETRYABLE_SUB_CODES:
            raise GatewayUnavailable(message.strip())
        raise GatewayRefused(message.strip(), gateway_code=code, sub_code=sub_code)


@contextmanager
def _reading(method: str) -> Iterator[None]:
    """A signed answer missing a field or holding a malformed one: Alipay's mistake or a
    version of the API this adapter does not know; its effect is unknown, as with no answer."""
    try:
        yield
    except (KeyError, ValueError) as error:
        raise GatewayUnavailable(f"{method}: an answer without a valid {error}") from error


def _status(value: object) -> TradeStatus:
    if (status := trade_status(value)) is None:
        raise GatewayUnavailable(f"alipay.trade.query: an unknown trade status {value!r}")
    return status
