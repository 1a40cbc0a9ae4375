"""The open API's gateway: a signed form in, a signed `<method>_response` out."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cryptography.hazmat.primitives.asymmetric import rsa

from alipay_sim.fields import beijing, cents, minutes, yuan
from alipay_sim.ledger import Ledger, Refusal
from alipay_sim.signing import sign, signing_string, verifies

Fields = dict[str, Any]
SUCCESS: Fields = {"code": "10000", "msg": "Success"}
FAULTS = ("unavailable", "system_error", "http_500", "bad_signature", "unsigned", "lost_answer")


class Invalid(Exception):
    """A request Alipay refuses before its business: code 40002 with a sub_code."""

    def __init__(self, sub_code: str, sub_msg: str) -> None:
        super().__init__(sub_code)
        self.sub_code = sub_code
        self.sub_msg = sub_msg


@dataclass
class Reply:
    status: int
    body: str


@dataclass
class OpenApi:
    """One merchant app's view of the gateway, with call counts and injectable faults."""

    app_id: str
    seller_id: str
    merchant_key: rsa.RSAPublicKey
    key: rsa.RSAPrivateKey
    ledger: Ledger
    qr_url: Callable[[str], str]  # a trade's QR token → its pay page
    calls: Counter[str] = field(default_factory=Counter)
    faults: dict[str, list[str]] = field(default_factory=dict)  # by method, next first

    def handle(self, params: Mapping[str, str], now: datetime) -> Reply:
        method = params.get("method", "")
        self.calls[method] += 1
        pending = self.faults.get(method)
        fault = pending.pop(0) if pending else None
        if fault == "http_500":
            return Reply(500, "Internal Server Error")
        if fault in ("unavailable", "system_error"):
            answer = _fault_answer(fault)
        else:
            try:
                answer = {**SUCCESS, **self._run(method, params, now)}
            except Invalid as invalid:
                answer = {"code": "40002", "msg": "Invalid Arguments",
                          "sub_code": invalid.sub_code, "sub_msg": invalid.sub_msg}  # fmt: skip
            except Refusal as refusal:
                answer = {"code": "40004", "msg": "Business Failed",
                          "sub_code": refusal.sub_code, "sub_msg": refusal.sub_msg}  # fmt: skip
        if fault == "lost_answer":
            return Reply(502, "Bad Gateway")
        return Reply(200, self._signed(method, answer, fault))

    def _run(self, method: str, params: Mapping[str, str], now: datetime) -> Fields:
        if params.get("app_id") != self.app_id:
            raise Invalid("isv.invalid-app-id", "无效的AppID参数")
        if params.get("sign_type") != "RSA2":
            raise Invalid("isv.invalid-signature-type", "无效的签名类型")
        if not verifies(self.merchant_key, signing_string(params), params.get("sign", "")):
            raise Invalid("isv.invalid-signature", "验签出错")
        if (action := _METHODS.get(method)) is None:
            raise Invalid("isv.invalid-method", "不存在的方法名")
        try:
            content = json.loads(params.get("biz_content", ""))
            if not isinstance(content, dict):
                raise TypeError
            return action(self, content, params, now)
        except (ValueError, TypeError, KeyError) as error:
            raise Refusal("ACQ.INVALID_PARAMETER", f"参数无效: {error}") from error

    def precreate(self, content: Fields, params: Mapping[str, str], now: datetime) -> Fields:
        trade = self.ledger.precreate(
            _text(content, "out_trade_no"),
            cents(_text(content, "total_amount")),
            _text(content, "subject"),
            minutes(str(content.get("timeout_express", "2h"))),
            params.get("notify_url") or None,
            now,
        )
        return {"out_trade_no": trade.out_trade_no, "qr_code": self.qr_url(trade.code)}

    def query(self, content: Fields, params: Mapping[str, str], now: datetime) -> Fields:
        trade = self.ledger.known(_text(content, "out_trade_no"))
        fields: Fields = {
            "trade_no": trade.trade_no,
            "out_trade_no": trade.out_trade_no,
            "trade_status": trade.status(now),
            "total_amount": yuan(trade.amount_cents),
        }
        if trade.payments:
            paid = trade.payments[0]
            fields |= {
                "buyer_logon_id": paid.buyer_logon_id,
                "buyer_user_id": paid.buyer_id,
                "buyer_pay_amount": yuan(trade.amount_cents),
                "receipt_amount": yuan(trade.amount_cents),
                "send_pay_date": beijing(paid.paid_at),
            }
        return fields

    def close(self, content: Fields, params: Mapping[str, str], now: datetime) -> Fields:
        trade = self.ledger.close(_text(content, "out_trade_no"), now)
        return {"trade_no": trade.trade_no, "out_trade_no": trade.out_trade_no}

    def refund(self, content: Fields, params: Mapping[str, str], now: datetime) -> Fields:
        payment, refund, moved = self.ledger.refund(
            _text(content, "out_trade_no"),
            content.get("trade_no") or None,
            cents(_text(content, "refund_amount")),
            _text(content, "out_request_no"),
            now,
        )
        return {
            "trade_no": payment.trade_no,
            "out_trade_no": refund.out_trade_no,
            "buyer_logon_id": payment.buyer_logon_id,
            "buyer_user_id": payment.buyer_id,
            "fund_change": "Y" if moved else "N",
            "refund_fee": yuan(payment.refunded_cents),
            "gmt_refund_pay": beijing(refund.at),
        }

    def _signed(self, method: str, answer: Fields, fault: str | None) -> str:
        """The answer and its signature over its exact text (none, or a wrong one, as the
        fault says)."""
        node = method.replace(".", "_") + "_response" if method in _METHODS else "error_response"
        text = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
        if fault == "unsigned":
            return f'{{"{node}":{text}}}'
        signature = sign(self.key, text + " " if fault == "bad_signature" else text)
        return f'{{"{node}":{text},"sign":"{signature}"}}'


def _text(content: Fields, name: str) -> str:
    value = content[name]
    if not isinstance(value, str) or not value or len(value) > 256:
        raise ValueError(name)
    return value


def _fault_answer(fault: str) -> Fields:
    if fault == "unavailable":
        return {"code": "20000", "msg": "Service Currently Unavailable",
                "sub_code": "isp.unknow-error", "sub_msg": "系统繁忙"}  # fmt: skip
    return {"code": "40004", "msg": "Business Failed",
            "sub_code": "ACQ.SYSTEM_ERROR", "sub_msg": "系统错误"}  # fmt: skip


_METHODS: dict[str, Callable[[OpenApi, Fields, Mapping[str, str], datetime], Fields]] = {
    "alipay.trade.precreate": OpenApi.precreate,
    "alipay.trade.query": OpenApi.query,
    "alipay.trade.close": OpenApi.close,
    "alipay.trade.refund": OpenApi.refund,
}
