"""The simulator's trades, payments and refunds, kept in memory, with Alipay's rules."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any


class Refusal(Exception):
    """A business error as Alipay answers it: code 40004 with a sub_code."""

    def __init__(self, sub_code: str, sub_msg: str) -> None:
        super().__init__(f"{sub_code}: {sub_msg}")
        self.sub_code = sub_code
        self.sub_msg = sub_msg


@dataclass
class Payment:
    trade_no: str
    buyer_id: str
    buyer_logon_id: str
    paid_at: datetime
    refunded_cents: int = 0


@dataclass
class Refund:
    out_request_no: str
    out_trade_no: str
    trade_no: str
    amount_cents: int
    at: datetime


@dataclass
class Trade:
    out_trade_no: str
    amount_cents: int
    subject: str
    notify_url: str | None
    code: str  # the QR's token
    created_at: datetime
    expires_at: datetime
    trade_no: str  # shown once the buyer scanned
    scanned: bool = False
    closed_at: datetime | None = None
    payments: list[Payment] = field(default_factory=list)
    refunds: dict[str, Refund] = field(default_factory=dict)

    def status(self, now: datetime) -> str:
        """As query answers it; PRECREATED (not yet scanned) is the simulator's own word for
        a trade Alipay does not know yet."""
        if self.payments:
            first = self.payments[0]
            return "TRADE_CLOSED" if first.refunded_cents == self.amount_cents else "TRADE_SUCCESS"
        if self.closed_at is not None or now >= self.expires_at:
            return "TRADE_CLOSED"
        return "WAIT_BUYER_PAY" if self.scanned else "PRECREATED"

    def view(self, now: datetime) -> dict[str, Any]:
        return {
            "out_trade_no": self.out_trade_no,
            "trade_no": self.trade_no,
            "status": self.status(now),
            "amount_cents": self.amount_cents,
            "subject": self.subject,
            "code": self.code,
            "notify_url": self.notify_url,
            "closed": self.closed_at is not None,
            "payments": [
                {"trade_no": p.trade_no, "buyer_id": p.buyer_id, "refunded_cents": p.refunded_cents}
                for p in self.payments
            ],
            "refunds": [
                {"out_request_no": r.out_request_no, "trade_no": r.trade_no,
                 "amount_cents": r.amount_cents}
                for r in self.refunds.values()
            ],
        }  # fmt: skip


class Ledger:
    """Every trade by out_trade_no and by its QR token."""

    def __init__(self) -> None:
        self.trades: dict[str, Trade] = {}
        self.by_code: dict[str, Trade] = {}

    def precreate(
        self, out_trade_no: str, amount_cents: int, subject: str, minutes: int,
        notify_url: str | None, now: datetime,
    ) -> Trade:  # fmt: skip
        """A new trade, or the same one again for the same order (Alipay's idempotency)."""
        if (trade := self.trades.get(out_trade_no)) is not None:
            status = trade.status(now)
            if trade.payments:
                raise Refusal("ACQ.TRADE_HAS_SUCCESS", "交易已被支付")
            if status == "TRADE_CLOSED":
                raise Refusal("ACQ.TRADE_HAS_CLOSE", "交易已经关闭")
            if trade.amount_cents != amount_cents or trade.subject != subject:
                raise Refusal("ACQ.CONTEXT_INCONSISTENT", "交易信息被篡改")
            return trade
        trade = Trade(
            out_trade_no=out_trade_no,
            amount_cents=amount_cents,
            subject=subject,
            notify_url=notify_url,
            code=secrets.token_urlsafe(16),
            created_at=now,
            expires_at=now + timedelta(minutes=minutes),
            trade_no=_trade_no(now),
        )
        self.trades[out_trade_no] = self.by_code[trade.code] = trade
        return trade

    def known(self, out_trade_no: str) -> Trade:
        """A trade Alipay would know: scanned or paid (a QR nobody scanned is not a trade)."""
        trade = self.trades.get(out_trade_no)
        if trade is None or not (trade.scanned or trade.payments):
            raise Refusal("ACQ.TRADE_NOT_EXIST", "交易不存在")
        return trade

    def close(self, out_trade_no: str, now: datetime) -> Trade:
        trade = self.known(out_trade_no)
        if trade.payments:
            raise Refusal("ACQ.TRADE_STATUS_ERROR", "交易状态不合法")
        trade.closed_at = trade.closed_at or now
        return trade

    def scan(self, trade: Trade, now: datetime) -> None:
        if trade.status(now) != "TRADE_CLOSED":
            trade.scanned = True

    def pay(self, trade: Trade, now: datetime, *, late: bool = False) -> Payment:
        """The buyer pays; `late` pays a closed or expired trade too (a buyer who scanned
        before the close), and a paid one again (a duplicate payment)."""
        if not late and trade.status(now) not in ("WAIT_BUYER_PAY", "PRECREATED"):
            raise Refusal("ACQ.TRADE_STATUS_ERROR", f"交易状态不合法: {trade.status(now)}")
        trade.scanned = True
        number = trade.trade_no if not trade.payments else _trade_no(now)
        payment = Payment(number, _buyer_id(), "159****5620", now)
        trade.payments.append(payment)
        return payment

    def refund(
        self, out_trade_no: str, trade_no: str | None, amount_cents: int, out_request_no: str,
        now: datetime,
    ) -> tuple[Payment, Refund, bool]:  # fmt: skip
        """The payment refunded, the refund, and whether money moved (not for a repeated
        out_request_no)."""
        trade = self.known(out_trade_no)
        if (done := trade.refunds.get(out_request_no)) is not None:
            if done.amount_cents != amount_cents:
                raise Refusal("ACQ.REFUND_AMT_NOT_EQUAL_TOTAL", "退款金额与原退款请求不一致")
            return _payment(trade, done.trade_no), done, False
        payment = _payment(trade, trade_no)
        if amount_cents > trade.amount_cents - payment.refunded_cents:
            raise Refusal("ACQ.REFUND_AMT_NOT_EQUAL_TOTAL", "退款金额超限")
        payment.refunded_cents += amount_cents
        done = Refund(out_request_no, out_trade_no, payment.trade_no, amount_cents, now)
        trade.refunds[out_request_no] = done
        return payment, done, True


def _payment(trade: Trade, trade_no: str | None) -> Payment:
    for payment in trade.payments:
        if trade_no is None or payment.trade_no == trade_no:
            return payment
    if trade_no is not None:
        raise Refusal("ACQ.TRADE_NOT_EXIST", "交易不存在")
    raise Refusal("ACQ.TRADE_STATUS_ERROR", "交易未支付")


def _trade_no(now: datetime) -> str:
    return (
        now.strftime("%Y%m%d") + "22001" + "".join(secrets.choice("0123456789") for _ in range(15))
    )


def _buyer_id() -> str:
    return "2088" + "".join(secrets.choice("0123456789") for _ in range(12))
