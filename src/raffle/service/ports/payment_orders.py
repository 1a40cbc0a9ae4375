"""Payment orders' doors: their rows on the user's shard, and the cache of their QR codes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from raffle.domain.payments import (
    Cause,
    Change,
    OrderState,
    Payment,
    PaymentOrder,
    PaymentState,
)


class PaymentOrderRepository(Protocol):
    """Orders, their history and the payments notified for them, on one shard."""

    async def add(self, order: PaymentOrder) -> bool:
        """Record a new (created) order and its first line of history; False, and nothing
        written, when the user has an open order for the same content (one at a time)."""
        ...

    async def get(self, out_trade_no: str) -> PaymentOrder | None: ...

    async def open_of(self, user_id: str, content_id: str) -> PaymentOrder | None:
        """The user's open (created or paying) order for the content, if any."""
        ...

    async def move(
        self,
        out_trade_no: str,
        expected: OrderState,
        new: OrderState,
        cause: Cause,
        at: datetime,
        *,
        trade_no: str | None = None,
    ) -> bool:
        """Compare-and-set the order from `expected` to `new` (locking its row until
        commit) and record the change in its history; `trade_no` names the payment that
        paid it. False, nothing changed, when it was not in `expected`."""
        ...

    async def history(self, out_trade_no: str) -> list[Change]:
        """The order's changes, oldest first."""
        ...

    async def of_user(self, user_id: str, before: str | None, limit: int) -> list[PaymentOrder]:
        """The user's orders, newest first, older than `before` (an out_trade_no)."""
        ...

    async def listing(
        self, state: OrderState | None, before: str | None, limit: int
    ) -> list[PaymentOrder]:
        """Orders on this shard (in `state` if given), newest first, older than `before`."""
        ...

    async def created_before(
        self, states: Sequence[OrderState], before: datetime, limit: int
    ) -> list[PaymentOrder]:
        """Orders in `states` made before `before`, oldest first (expiry, reconciliation)."""
        ...

    async def record(self, payment: Payment) -> bool:
        """Record a notified payment; False, nothing written, when its trade number was
        recorded before (the gateway notifies until it hears `success`)."""
        ...

    async def payment(self, trade_no: str) -> Payment | None: ...

    async def payments_of(self, out_trade_no: str) -> list[Payment]: ...

    async def settle(
        self,
        trade_no: str,
        expected: PaymentState,
        new: PaymentState,
        at: datetime,
        *,
        error: str | None = None,
    ) -> bool:
        """Compare-and-set the payment's state (locking its row until commit); a refund
        attempt's `error` is kept and counted, a state without one clears it."""
        ...

    async def payments_in(
        self, states: Sequence[PaymentState], before: datetime, limit: int
    ) -> list[Payment]:
        """Payments in `states` last changed before `before`, oldest first."""
        ...


class QrCodes(Protocol):
    """The QR content of orders being paid, for as long as the order lives: in Redis
    (shared by every process) or in this process's memory."""

    async def get(self, out_trade_no: str) -> str | None: ...

    async def put(self, out_trade_no: str, content: str, seconds: int) -> None: ...

    async def drop(self, out_trade_no: str) -> None: ...
