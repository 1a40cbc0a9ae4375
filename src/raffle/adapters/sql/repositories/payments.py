"""Payment orders, their history and their notified payments in SQL, on the user's shard."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping, insert, select, update

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_ignore_any
from raffle.adapters.sql.tables.payments import ERROR_LENGTH, PaymentTables
from raffle.domain.payments import (
    OPEN,
    Cause,
    Change,
    OrderState,
    Payment,
    PaymentOrder,
    PaymentState,
)


class SqlPaymentOrderRepository:
    def __init__(self, connection: SqlConnection, tables: PaymentTables) -> None:
        self._connection = connection
        self._orders = tables.order
        self._history = tables.history
        self._payments = tables.payment

    async def add(self, order: PaymentOrder) -> bool:
        row = {
            "out_trade_no": order.out_trade_no,
            "user_id": order.user_id,
            "content_id": order.content_id,
            "amount_cents": order.amount_cents,
            "subject": order.subject,
            "state": order.state.value,
            "open_content": order.content_id if order.open else None,
            "trade_no": order.trade_no,
            "created_at": order.created_at,
            "updated_at": order.updated_at,
        }
        # A concurrent twin waits on the first one's uncommitted open order, then inserts
        # nothing: the caller reads that one instead.
        statement = insert_ignore_any(self._connection.dialect, self._orders, row)
        if (await self._connection.execute(statement)).rowcount != 1:
            return False
        await self._write_history(
            order.out_trade_no, None, order.state, Cause.CREATED, order.created_at
        )
        return True

    async def get(self, out_trade_no: str) -> PaymentOrder | None:
        o = self._orders
        query = select(o).where(o.c.out_trade_no == out_trade_no)
        row = (await self._connection.execute(query)).first()
        return None if row is None else _order(row._mapping)

    async def open_of(self, user_id: str, content_id: str) -> PaymentOrder | None:
        o = self._orders
        query = select(o).where(o.c.user_id == user_id, o.c.open_content == content_id)
        row = (await self._connection.execute(query)).first()
        return None if row is None else _order(row._mapping)

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
        o = self._orders
        values: dict[str, Any] = {"state": new.value, "updated_at": at}
        if new not in OPEN:
            values["open_content"] = None
        if trade_no is not None:
            values["trade_no"] = trade_no
        statement = (
            update(o)
            .where(o.c.out_trade_no == out_trade_no, o.c.state == expected.value)
            .values(**values)
        )
        if (await self._connection.execute(statement)).rowcount != 1:
            return False
        await self._write_history(out_trade_no, expected, new, cause, at)
        return True

    async def _write_history(
        self,
        out_trade_no: str,
        from_state: OrderState | None,
        to_state: OrderState,
        cause: Cause,
        at: datetime,
    ) -> None:
        row = {
            "out_trade_no": out_trade_no,
            "to_state": to_state.value,
            "from_state": None if from_state is None else from_state.value,
            "cause": cause.value,
            "at": at,
        }
        await self._connection.execute(insert(self._history).values(row))

    async def history(self, out_trade_no: str) -> list[Change]:
        h = self._history
        query = select(h).where(h.c.out_trade_no == out_trade_no)
        found = [
            Change(
                r.out_trade_no,
                r.at,
                None if r.from_state is None else OrderState(r.from_state),
                OrderState(r.to_state),
                Cause(r.cause),
            )
            for r in await self._connection.execute(query)
        ]
        # Changes within one clock tick keep the order of the states (the transitions
        # form no cycle, and the enumeration lists them in it).
        steps = list(OrderState)
        return sorted(found, key=lambda c: (c.at, steps.index(c.to_state)))

    async def of_user(self, user_id: str, before: str | None, limit: int) -> list[PaymentOrder]:
        o = self._orders
        query = (
            select(o).where(o.c.user_id == user_id).order_by(o.c.out_trade_no.desc()).limit(limit)
        )
        if before is not None:
            query = query.where(o.c.out_trade_no < before)
        return [_order(r._mapping) for r in await self._connection.execute(query)]

    async def listing(
        self, state: OrderState | None, before: str | None, limit: int
    ) -> list[PaymentOrder]:
        o = self._orders
        query = select(o).order_by(o.c.out_trade_no.desc()).limit(limit)
        if state is not None:
            query = query.where(o.c.state == state.value)
        if before is not None:
            query = query.where(o.c.out_trade_no < before)
        return [_order(r._mapping) for r in await self._connection.execute(query)]

    async def created_before(
        self, states: Sequence[OrderState], before: datetime, limit: int
    ) -> list[PaymentOrder]:
        o = self._orders
        query = (
            select(o)
            .where(o.c.state.in_([s.value for s in states]), o.c.created_at < before)
            .order_by(o.c.created_at)
            .limit(limit)
        )
        return [_order(r._mapping) for r in await self._connection.execute(query)]

    async def record(self, payment: Payment) -> bool:
        row = {
            "trade_no": payment.trade_no,
            "out_trade_no": payment.out_trade_no,
            "user_id": payment.user_id,
            "amount_cents": payment.amount_cents,
            "state": payment.state.value,
            "attempts": payment.attempts,
            "last_error": payment.last_error,
            "notified_at": payment.notified_at,
            "updated_at": payment.updated_at,
        }
        # Concurrent copies of one notification wait on the first one's uncommitted row,
        # then insert nothing.
        statement = insert_ignore_any(self._connection.dialect, self._payments, row)
        return (await self._connection.execute(statement)).rowcount == 1

    async def payment(self, trade_no: str) -> Payment | None:
        p = self._payments
        row = (await self._connection.execute(select(p).where(p.c.trade_no == trade_no))).first()
        return None if row is None else _payment(row._mapping)

    async def payments_of(self, out_trade_no: str) -> list[Payment]:
        p = self._payments
        query = select(p).where(p.c.out_trade_no == out_trade_no).order_by(p.c.notified_at)
        return [_payment(r._mapping) for r in await self._connection.execute(query)]

    async def settle(
        self,
        trade_no: str,
        expected: PaymentState,
        new: PaymentState,
        at: datetime,
        *,
        error: str | None = None,
    ) -> bool:
        p = self._payments
        values: dict[str, Any] = {"state": new.value, "updated_at": at, "last_error": None}
        if error is not None:
            values.update(last_error=error[:ERROR_LENGTH], attempts=p.c.attempts + 1)
        statement = (
            update(p).where(p.c.trade_no == trade_no, p.c.state == expected.value).values(**values)
        )
        return (await self._connection.execute(statement)).rowcount == 1

    async def payments_in(
        self, states: Sequence[PaymentState], before: datetime, limit: int
    ) -> list[Payment]:
        p = self._payments
        query = (
            select(p)
            .where(p.c.state.in_([s.value for s in states]), p.c.updated_at < before)
            .order_by(p.c.updated_at)
            .limit(limit)
        )
        return [_payment(r._mapping) for r in await self._connection.execute(query)]


def _order(r: RowMapping) -> PaymentOrder:
    return PaymentOrder(
        out_trade_no=r["out_trade_no"],
        user_id=r["user_id"],
        content_id=r["content_id"],
        amount_cents=r["amount_cents"],
        subject=r["subject"],
        state=OrderState(r["state"]),
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        trade_no=r["trade_no"],
    )


def _payment(r: RowMapping) -> Payment:
    return Payment(
        trade_no=r["trade_no"],
        out_trade_no=r["out_trade_no"],
        user_id=r["user_id"],
        amount_cents=r["amount_cents"],
        state=PaymentState(r["state"]),
        notified_at=r["notified_at"],
        updated_at=r["updated_at"],
        attempts=r["attempts"],
        last_error=r["last_error"],
    )
