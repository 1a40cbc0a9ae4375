"""A shard's unit of work on an SQLite file: the draw's statements on the sqlite3 connection
under its synchronous SQLAlchemy one (see connection.py), in its transaction.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from functools import cache, lru_cache
from typing import Any

from sqlalchemy import Table

from raffle.adapters.sql.connection import SqlConnection, SqliteConnection
from raffle.adapters.sql.repositories.orders import SqlOrderRepository
from raffle.adapters.sql.repositories.outbox import SqlOutboxRepository
from raffle.adapters.sql.repositories.quotas import SqlQuotaRepository
from raffle.adapters.sql.repositories.wins import SqlWinRepository
from raffle.adapters.sql.shards import SqlShardUnitOfWork
from raffle.adapters.sql.tables.draw_rows import (
    ORDER_COLUMNS,
    OUTBOX_COLUMNS,
    WIN_COLUMNS,
    WIN_READ_COLUMNS,
    order_of,
    order_values,
    outbox_values,
    win_of,
    win_values,
)
from raffle.adapters.sql.tables.shard import ShardTables
from raffle.domain.draws import OutboxMessage, RaffleOrder, Win
from raffle.domain.quota import QuotaAccount

_FORMAT = "%Y-%m-%d %H:%M:%S.%f"  # how SQLAlchemy stores a DateTime on SQLite


@lru_cache(maxsize=4)  # a draw stores one instant three times: order, win, message
def _stored(at: datetime) -> str:
    return at.astimezone(UTC).replace(tzinfo=None).strftime(_FORMAT)  # naive UTC (UtcDateTime)


def _read(stored: str) -> datetime:
    return datetime.fromisoformat(stored).replace(tzinfo=UTC)


@cache
def _account_sql(account: Table) -> str:
    return (
        f"UPDATE {account.name} SET total_left = total_left - 1 "  # noqa: S608
        "WHERE user_id = ? AND activity_id = ? AND total_left > 0 "
        "RETURNING total, total_left, day, month"
    )


@cache
def _period_sql(table: Table, column: str, left: str) -> str:
    # The period's first draw makes its row at the allowance less this chance; later ones
    # take from it while any is left. No row returned: the period is exhausted.
    return (
        f"INSERT INTO {table.name} (user_id, activity_id, {column}, {left}) "
        "SELECT ?, ?, ?, ? WHERE ? > 0 "
        f"ON CONFLICT (user_id, activity_id, {column}) "
        f"DO UPDATE SET {left} = {left} - 1 WHERE {left} > 0 RETURNING {left}"
    )


class SqliteQuotaRepository(SqlQuotaRepository):
    def __init__(
        self, connection: SqlConnection, tables: ShardTables, driver: sqlite3.Connection
    ) -> None:
        super().__init__(connection, tables)
        self._driver = driver

    async def consume(
        self, user_id: str, activity_id: int, day: str, month: str
    ) -> QuotaAccount | None:
        # The process's SQLite transactions take turns, so nothing runs between these.
        execute = self._driver.execute
        row = execute(_account_sql(self._account), (user_id, activity_id)).fetchone()
        if row is None:
            return None  # no account, or its total is used up: nothing was taken
        total, total_left, per_day, per_month = row
        day_left = self._take_period(
            self._day, "day", "day_left", user_id, activity_id, day, per_day
        )
        month_left = None
        if day_left is not None:
            month_left = self._take_period(
                self._month, "month", "month_left", user_id, activity_id, month, per_month
            )
        if day_left is None or month_left is None:
            # What was taken goes back in this transaction, so committing it is harmless.
            account = {"user_id": user_id, "activity_id": activity_id}
            await self._add(self._account, "total_left", account, 1)
            if day_left is not None:
                await self._add(self._day, "day_left", {**account, "day": day}, 1)
            return None
        return QuotaAccount(
            user_id, activity_id, total, total_left, per_day, day_left, per_month, month_left
        )

    def _take_period(
        self,
        table: Table,
        column: str,
        left: str,
        user_id: str,
        activity_id: int,
        period: str,
        allowance: int,
    ) -> int | None:
        statement = _period_sql(table, column, left)
        params = (user_id, activity_id, period, allowance - 1, allowance)
        row = self._driver.execute(statement, params).fetchone()
        return None if row is None else int(row[0])


@cache
def _insert_sql(table: Table, columns: tuple[str, ...]) -> str:
    marks = ", ".join("?" for _ in columns)
    return f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({marks})"  # noqa: S608


@cache
def _select_sql(table: Table, columns: tuple[str, ...], where: tuple[str, ...]) -> str:
    condition = " AND ".join(f"{name} = ?" for name in where)
    return f"SELECT {', '.join(columns)} FROM {table.name} WHERE {condition}"  # noqa: S608


class SqliteOrderRepository(SqlOrderRepository):
    def __init__(
        self, connection: SqlConnection, tables: ShardTables, driver: sqlite3.Connection
    ) -> None:
        super().__init__(connection, tables)
        self._driver = driver

    async def add(self, order: RaffleOrder) -> None:
        row = order_values(order, _stored)
        self._driver.execute(_insert_sql(self._orders, ORDER_COLUMNS), row)

    async def by_request(self, user_id: str, request_key: str) -> RaffleOrder | None:
        query = _select_sql(self._orders, ORDER_COLUMNS, ("user_id", "request_key"))
        row: Any = self._driver.execute(query, (user_id, request_key)).fetchone()
        return None if row is None else order_of(row, _read)


class SqliteWinRepository(SqlWinRepository):
    def __init__(
        self, connection: SqlConnection, tables: ShardTables, driver: sqlite3.Connection
    ) -> None:
        super().__init__(connection, tables)
        self._driver = driver

    async def add(self, win: Win) -> None:
        row = win_values(win, _stored)
        self._driver.execute(_insert_sql(self._table, WIN_COLUMNS), row)

    async def get(self, order_id: str) -> Win | None:
        query = _select_sql(self._table, WIN_READ_COLUMNS, ("order_id",))
        row: Any = self._driver.execute(query, (order_id,)).fetchone()
        return None if row is None else win_of(row, _read)


class SqliteOutboxRepository(SqlOutboxRepository):
    def __init__(
        self, connection: SqlConnection, tables: ShardTables, driver: sqlite3.Connection
    ) -> None:
        super().__init__(connection, tables)
        self._driver = driver

    async def add(self, message: OutboxMessage) -> None:
        row = outbox_values(message, _stored)
        self._driver.execute(_insert_sql(self._table, OUTBOX_COLUMNS), row)


class SqliteShardUnitOfWork(SqlShardUnitOfWork):
    def _bind(self, connection: SqlConnection) -> None:
        super()._bind(connection)
        if not isinstance(connection, SqliteConnection):  # what TransactionScope opens here
            raise TypeError("an SQLite file's unit of work runs on a SqliteConnection")
        driver, tables = connection.driver(), self.tables
        self.quotas = SqliteQuotaRepository(connection, tables, driver)
        self.orders = SqliteOrderRepository(connection, tables, driver)
        self.wins = SqliteWinRepository(connection, tables, driver)
        self.outbox = SqliteOutboxRepository(connection, tables, driver)
