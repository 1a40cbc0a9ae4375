"""Payment orders (seed 000 支付订单): their states, the payments the gateway notified, refunds."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from raffle.domain.errors import IllegalState, RaffleError

TIMEOUT = timedelta(minutes=30)  # an order's `timeout_express`: its QR and its life
SUBJECT_MAX = 128  # Alipay's `subject`
REFUND_ATTEMPTS = 5  # a refund failing this many times waits for an operator
_OUT_TRADE_NO = re.compile(r"^([0-9a-f]{24})_([0-9]{1,4})$")


class OrderState(StrEnum):
    CREATED = "created"
    PAYING = "paying"  # precreated at the gateway: its QR shown
    PAID = "paid"  # access granted in the same transaction
    CLOSED = "closed"  # expired or cancelled unpaid
    REFUNDING = "refunding"  # paid when it was closed, or for content held already
    REFUNDED = "refunded"


OPEN = frozenset({OrderState.CREATED, OrderState.PAYING})

# to -> the states it may be reached from; storage applies each as a compare-and-set.
TRANSITIONS: dict[OrderState, frozenset[OrderState]] = {
    OrderState.CREATED: frozenset(),
    OrderState.PAYING: frozenset({OrderState.CREATED}),
    OrderState.PAID: OPEN,
    OrderState.CLOSED: OPEN,
    OrderState.REFUNDING: OPEN | {OrderState.CLOSED},
    OrderState.REFUNDED: frozenset({OrderState.REFUNDING}),
}


class PaymentState(StrEnum):
    """A payment the gateway notified (one gateway trade number)."""

    RECEIVED = "received"  # recorded with its outbox message, not yet applied
    APPLIED = "applied"  # it paid its order
    REFUNDING = "refunding"  # a duplicate: to be paid back
    REFUNDED = "refunded"
    REFUND_FAILED = "refund_failed"  # failed REFUND_ATTEMPTS times: an operator retries


class Cause(StrEnum):
    """Why an order changed state, kept in its history."""

    CREATED = "created"
    PRECREATED = "precreated"
    PAID = "paid"
    EXPIRED = "expired"
    CANCELLED = "cancelled"
    SUPERSEDED = "superseded"  # the user's newer order for the same content shows its QR
    PAID_WHEN_CLOSED = "paid_when_closed"
    HELD_ALREADY = "held_already"  # the user holds the content through another order
    REFUNDED = "refunded"


class UnknownOrder(RaffleError):
    code = "unknown_payment_order"


class OrderNotOpen(IllegalState):
    """The order is paid, closed or refunded: it shows no QR and cannot be cancelled."""

    code = "payment_order_not_open"


class ContentHeld(RaffleError):
    """The user holds the content already: nothing to buy."""

    code = "content_held"


class NotForSale(RaffleError):
    code = "content_not_for_sale"


class UnknownPayment(RaffleError):
    code = "unknown_payment"


class RefundNotFailed(RaffleError):
    """Only a refund that failed for good can be retried by an operator."""

    code = "refund_not_failed"


@dataclass(frozen=True, slots=True)
class PaymentOrder:
    """What a user pays for a piece of content; the amount is fixed when it is made."""

    out_trade_no: str  # ours, sent to the gateway: names the shard that holds the order
    user_id: str
    content_id: str
    amount_cents: int
    subject: str
    state: OrderState
    created_at: datetime
    updated_at: datetime
    trade_no: str | None = None  # the gateway's trade that paid it

    @property
    def expires_at(self) -> datetime:
        return self.created_at + TIMEOUT

    @property
    def open(self) -> bool:
        return self.state in OPEN


@dataclass(frozen=True, slots=True)
class Change:
    """One line of an order's history."""

    out_trade_no: str
    at: datetime
    from_state: OrderState | None  # None: created
    to_state: OrderState
    cause: Cause


@dataclass(frozen=True, slots=True)
class Payment:
    """A payment the gateway notified, as recorded; `out_request_no` names its refund."""

    trade_no: str
    out_trade_no: str
    user_id: str
    amount_cents: int
    state: PaymentState
    notified_at: datetime
    updated_at: datetime
    attempts: int = 0  # refund attempts
    last_error: str | None = None

    @property
    def out_request_no(self) -> str:
        return refund_request_no(self.trade_no)


@dataclass(frozen=True, slots=True)
class Mismatch:
    """An order whose local state and the gateway's record disagree."""

    out_trade_no: str
    kind: str  # one of MISMATCHES
    local_state: OrderState
    local_cents: int
    gateway_status: str | None  # None: the gateway knows no trade
    gateway_cents: int | None


PAID_THERE = "paid_there_not_here"
PAID_HERE = "paid_here_not_there"
AMOUNT = "amount"
MISMATCHES = (PAID_THERE, PAID_HERE, AMOUNT)


def out_trade_no(order_id: str, shard: int) -> str:
    """The order's number at the gateway: its id, then the index of the shard that holds it,
    since a notification carries nothing else to find it by."""
    return f"{order_id}_{shard}"


def shard_of(number: str) -> int | None:
    """The shard index an out_trade_no names; None when it is not one of ours."""
    found = _OUT_TRADE_NO.match(number)
    return None if found is None else int(found.group(2))


def refund_request_no(trade_no: str) -> str:
    """The refund's number, made from the payment's: a retried refund refunds once."""
    return f"R{trade_no}"


def subject(title: str) -> str:
    return title[:SUBJECT_MAX]


def compare(order: PaymentOrder, status: str | None, cents: int | None) -> str | None:
    """The kind of mismatch between the order and the gateway's trade (None: they agree).
    A gateway's paid trade is ours once the order is paid or being refunded."""
    paid_there = status in ("TRADE_SUCCESS", "TRADE_FINISHED")
    paid_here = order.state in (OrderState.PAID, OrderState.REFUNDING, OrderState.REFUNDED)
    if paid_there and not paid_here:
        return PAID_THERE
    if order.state is OrderState.PAID and not paid_there:
        return PAID_HERE
    if paid_there and cents != order.amount_cents:
        return AMOUNT
    return None


NOTIFIED = "payment.notified"  # the outbox topic of a recorded payment; its key the trade_no


class Outcome(StrEnum):
    """What a notified payment does to its order."""

    PAY = "pay"  # the order is paid and access granted
    REFUND_ORDER = "refund_order"  # the order goes refunding with the payment
    REFUND = "refund"  # the order stays as it is (paid by another payment); this one is refunded


def outcome(order: PaymentOrder, held_elsewhere: bool) -> tuple[Outcome, OrderState | None, Cause]:
    """What a payment for `order` does: the outcome, the order's new state (None: kept) and
    why. `held_elsewhere`: the user holds the content through something else."""
    if order.open and not held_elsewhere:
        return Outcome.PAY, OrderState.PAID, Cause.PAID
    if order.open:
        return Outcome.REFUND_ORDER, OrderState.REFUNDING, Cause.HELD_ALREADY
    if order.state is OrderState.CLOSED:
        return Outcome.REFUND_ORDER, OrderState.REFUNDING, Cause.PAID_WHEN_CLOSED
    return Outcome.REFUND, None, Cause.HELD_ALREADY
