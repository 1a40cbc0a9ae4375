"""The payment gateway: QR trades, their state, closing, refunds and signed notifications."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from raffle.domain.errors import RaffleError, Unavailable

# A trade's state at the gateway: waiting for the buyer, paid (refundable), paid and past
# its refund period, or closed (never paid, or refunded in full).
TradeStatus = Literal["WAIT_BUYER_PAY", "TRADE_SUCCESS", "TRADE_FINISHED", "TRADE_CLOSED"]
PAID: frozenset[TradeStatus] = frozenset({"TRADE_SUCCESS", "TRADE_FINISHED"})

# What a notification can fail on, each the name of the field that failed (`sign` for the
# signature, also when there is none).
Failure = Literal[
    "sign",
    "app_id",
    "seller_id",
    "trade_status",
    "total_amount",
    "out_trade_no",
    "trade_no",
    "notify_time",
    "gmt_payment",
]


@dataclass(frozen=True, slots=True)
class Trade:
    """A trade as the gateway reports it; amounts in cents."""

    out_trade_no: str  # ours: the payment order's number
    trade_no: str  # the gateway's
    status: TradeStatus
    amount_cents: int
    buyer_id: str | None = None
    buyer_logon_id: str | None = None  # masked by the gateway, e.g. 159****5620
    paid_at: datetime | None = None  # aware


@dataclass(frozen=True, slots=True)
class Refund:
    """A refund the gateway accepted; `fund_change` is false when this `out_request_no` had
    refunded already (the gateway's idempotency: the money moved once)."""

    out_trade_no: str
    trade_no: str
    out_request_no: str
    refunded_cents: int  # the trade's refunds so far, this one included
    fund_change: bool
    refunded_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Notification:
    """A payment notification whose signature, app, seller and status held. Whether its
    out_trade_no is ours and its amount the order's is for the caller to check."""

    notify_id: str
    out_trade_no: str
    trade_no: str
    status: TradeStatus  # one of PAID
    amount_cents: int
    notified_at: datetime
    buyer_id: str | None = None
    paid_at: datetime | None = None


class PaymentGateway(Protocol):
    """A QR payment platform (Alipay's face-to-face payment or its simulator). Every call
    is safe to repeat: precreate by out_trade_no, refund by out_request_no. Each raises
    GatewayUnavailable when it may be retried, GatewayRefused when the gateway said no."""

    async def precreate(
        self, out_trade_no: str, amount_cents: int, subject: str, timeout_minutes: int
    ) -> str:
        """The QR code's content (a URL) for paying `amount_cents` within `timeout_minutes`."""
        ...

    async def query(self, out_trade_no: str) -> Trade | None:
        """The trade, or None when the gateway knows none: also a precreated one that no buyer
        has scanned yet (Alipay opens the trade at the scan)."""
        ...

    async def close(self, out_trade_no: str) -> bool:
        """Closes a trade waiting for payment; False when the gateway knew no trade (a QR
        never scanned: it cannot be closed, and stays payable until its timeout). A paid
        trade is refused (GatewayRefused, sub_code ACQ.TRADE_STATUS_ERROR)."""
        ...

    async def refund(
        self,
        out_trade_no: str,
        amount_cents: int,
        out_request_no: str,
        *,
        trade_no: str | None = None,
        reason: str = "",
    ) -> Refund:
        """Refunds `amount_cents` of the trade (the payment `trade_no`, when given); the same
        `out_request_no` again refunds nothing more and answers the first refund."""
        ...

    def verify_notification(self, form: Mapping[str, str]) -> Notification:
        """The asynchronous notification's fields (form-decoded), once its signature, app,
        seller and trade status hold; InvalidNotification naming what failed otherwise."""
        ...


class GatewayUnavailable(Unavailable):
    """The gateway did not answer, answered with a server error, or with an answer whose
    signature did not verify: nothing is known of the call's effect, and calling again is
    safe (every call is idempotent at the gateway)."""

    code = "gateway_unavailable"


class GatewayRefused(RaffleError):
    """The gateway refused the call for good (a business error): calling again will not help."""

    code = "gateway_refused"

    def __init__(self, message: str, *, gateway_code: str, sub_code: str = "") -> None:
        super().__init__(message)
        self.gateway_code = gateway_code
        self.sub_code = sub_code


class InvalidNotification(RaffleError):
    """A notification that must not count: `failed` names the field that did not hold."""

    code = "invalid_notification"

    def __init__(self, failed: Failure, message: str) -> None:
        super().__init__(message)
        self.failed = failed
