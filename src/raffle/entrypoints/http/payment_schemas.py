"""The HTTP shapes of payment orders, their history, payments and reconciliation."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from raffle.domain.payments import (
    Change,
    Mismatch,
    OrderState,
    Payment,
    PaymentOrder,
    PaymentState,
)
from raffle.entrypoints.http import examples
from raffle.entrypoints.http.content_schemas import ContentId
from raffle.entrypoints.http.examples import examples_of
from raffle.service.payment_jobs import Reconciliation


class PaymentOrderIn(BaseModel):
    model_config = examples_of(examples.PAYMENT_ORDER_IN) | ConfigDict(extra="forbid")

    content_id: ContentId = Field(description="The content to buy, at its price now.")


class PaymentOrderOut(BaseModel):
    model_config = examples_of(examples.PAYMENT_ORDER)

    out_trade_no: str = Field(description="The order's number, at the gateway too.")
    content_id: str
    amount_cents: int
    subject: str
    state: OrderState
    created_at: datetime
    updated_at: datetime
    expires_at: datetime = Field(description="Unpaid by then, it is closed.")
    trade_no: str | None = Field(description="The gateway's trade that paid it.")

    @classmethod
    def of(cls, o: PaymentOrder) -> PaymentOrderOut:
        return cls(
            out_trade_no=o.out_trade_no,
            content_id=o.content_id,
            amount_cents=o.amount_cents,
            subject=o.subject,
            state=o.state,
            created_at=o.created_at,
            updated_at=o.updated_at,
            expires_at=o.expires_at,
            trade_no=o.trade_no,
        )


class ChangeOut(BaseModel):
    at: datetime
    from_state: OrderState | None
    to_state: OrderState
    cause: str

    @classmethod
    def of(cls, c: Change) -> ChangeOut:
        return cls(at=c.at, from_state=c.from_state, to_state=c.to_state, cause=c.cause.value)


class PaymentOut(BaseModel):
    model_config = examples_of(examples.PAYMENT)

    trade_no: str
    out_trade_no: str
    user_id: str
    amount_cents: int
    state: PaymentState
    attempts: int = Field(description="Refund attempts so far.")
    last_error: str | None
    out_request_no: str = Field(description="The refund's number at the gateway.")
    notified_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, p: Payment) -> PaymentOut:
        return cls(
            trade_no=p.trade_no,
            out_trade_no=p.out_trade_no,
            user_id=p.user_id,
            amount_cents=p.amount_cents,
            state=p.state,
            attempts=p.attempts,
            last_error=p.last_error,
            out_request_no=p.out_request_no,
            notified_at=p.notified_at,
            updated_at=p.updated_at,
        )


class OrderDetailOut(PaymentOrderOut):
    """An order with its history and payments, for operators."""

    user_id: str
    history: list[ChangeOut]
    payments: list[PaymentOut]


class MismatchOut(BaseModel):
    out_trade_no: str
    kind: str = Field(description="paid_there_not_here, paid_here_not_there or amount.")
    local_state: OrderState
    local_cents: int
    gateway_status: str | None
    gateway_cents: int | None

    @classmethod
    def of(cls, m: Mismatch) -> MismatchOut:
        return cls(
            out_trade_no=m.out_trade_no,
            kind=m.kind,
            local_state=m.local_state,
            local_cents=m.local_cents,
            gateway_status=m.gateway_status,
            gateway_cents=m.gateway_cents,
        )


class ReconciliationOut(BaseModel):
    model_config = examples_of(examples.RECONCILIATION)

    checked: int
    clean: bool
    mismatches: list[MismatchOut]

    @classmethod
    def of(cls, r: Reconciliation) -> ReconciliationOut:
        return cls(
            checked=r.checked, clean=r.clean, mismatches=[MismatchOut.of(m) for m in r.mismatches]
        )
