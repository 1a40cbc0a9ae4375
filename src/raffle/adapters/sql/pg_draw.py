"""The draw's statements on PostgreSQL, run on the asyncpg connection under the unit of work's
SQLAlchemy connection, in its transaction.

SQLAlchemy's async path costs ~150-250 µs of CPU per statement (execution context, the
greenlet bridge, its asyncpg adapter); asyncpg itself ~25 µs with its prepared-statement
cache. The draw's hot statements are plain parameterised SQL here; taking a chance is one
statement (data-modifying CTEs over the account, day and month rows), with the replay lookup.
Everything else, and the rare paths, stay on SQLAlchemy, in the same transaction.

The SQL is put together from our own table and column names only; every value is a bind
parameter ($1, $2, ...), hence the `noqa: S608`s.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from functools import cache
from typing import Any

from sqlalchemy import Table
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.base import Executable

from raffle.adapters.sql.connection import Params, Rows, Savepoint, SqlConnection
from raffle.adapters.sql.draw_rows import (
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
from raffle.adapters.sql.order_repositories import SqlOrderRepository
from raffle.adapters.sql.outbox_repositories import SqlOutboxRepository
from raffle.adapters.sql.quota_repositories import SqlQuotaRepository
from raffle.adapters.sql.shard_tables import ShardTables
from raffle.adapters.sql.win_repositories import SqlWinRepository
from raffle.domain.draws import OutboxMessage, RaffleOrder, Win
from raffle.domain.errors import Contention
from raffle.domain.quota import QuotaAccount


class Driver:
    """The asyncpg connection of one SQLAlchemy connection, its transaction begun: SQLAlchemy's
    adapter begins lazily, at the first statement, and commits or rolls back what it began.

    INSERTs are held back and sent together, as one statement (data-modifying CTEs), before
    the next statement of the unit of work and before its commit: the order, the win and
    the outbox message cost one round trip instead of three.
    """

    def __init__(self, connection: AsyncConnection) -> None:
        self._connection = connection
        self._driver: Any = None
        self._held: list[tuple[Table, tuple[str, ...], tuple[Any, ...]]] = []
        # The replay lookup to come (OrderRepository.expect), and what taking the chance found.
        self.expected: tuple[str, str] | None = None
        self.found: dict[tuple[str, str], RaffleOrder | None] = {}

    async def __call__(self) -> Any:
        """The asyncpg connection, with the held INSERTs sent."""
        driver = await self._raw()
        if self._held:
            await self.flush()
        return driver

    def insert(self, table: Table, columns: tuple[str, ...], values: tuple[Any, ...]) -> None:
        self._held.append((table, columns, values))

    async def flush(self) -> None:
        if not self._held:
            return
        held, self._held = self._held, []
        statement = _inserts_sql(tuple((table, columns) for table, columns, _ in held))
        values = (v for _, _, values in held for v in values)
        try:
            await (await self._raw()).execute(statement, *values)
        except Exception as error:
            if not _request_key_taken(error):
                raise
            # Its twin committed while this one waited for the account's lock, after the
            # replay lookup's snapshot (PgQuotaRepository.consume): run again, to replay it.
            raise Contention("a draw with this Idempotency-Key was just recorded") from error

    async def _raw(self) -> Any:
        if self._driver is None:
            fairy = await self._connection.get_raw_connection()
            adapted: Any = fairy.dbapi_connection
            if adapted._transaction is None:
                await adapted._start_transaction()
            self._driver = fairy.driver_connection
        return self._driver


def _request_key_taken(error: Exception) -> bool:
    """Whether asyncpg refused an order for its (user, Idempotency-Key) index (unique_violation)."""
    constraint = getattr(error, "constraint_name", None) or ""
    return getattr(error, "sqlstate", None) == "23505" and "request_key" in constraint


class Flushing:
    """The SQLAlchemy connection for the repositories' other statements: each first sends
    the held INSERTs, so every statement sees the rows added before it."""

    def __init__(self, connection: AsyncConnection, driver: Driver) -> None:
        self._connection = connection
        self._driver = driver

    @property
    def dialect(self) -> Dialect:
        return self._connection.dialect

    async def execute(self, statement: Executable, parameters: Params = None) -> Rows:
        await self._driver.flush()
        return await self._connection.execute(statement, parameters)

    async def begin_nested(self) -> Savepoint:
        await self._driver.flush()
        return await self._connection.begin_nested()

    async def scalar(
        self, statement: Executable, parameters: Mapping[str, Any] | None = None
    ) -> Any:
        await self._driver.flush()
        return await self._connection.scalar(statement, parameters)


def driver_for(connection: SqlConnection) -> tuple[Flushing, Driver] | None:
    """For SQLAlchemy's asyncpg connection, the connection the repositories use and the
    Driver under it; else None."""
    if isinstance(connection, AsyncConnection) and connection.dialect.driver == "asyncpg":
        driver = Driver(connection)
        return Flushing(connection, driver), driver
    return None


@cache
def _inserts_sql(inserts: tuple[tuple[Table, tuple[str, ...]], ...]) -> str:
    """One statement for INSERTs of one row each: all but the last as CTEs."""
    parts, first = [], 1
    for table, columns in inserts:
        marks = ", ".join(f"${i}" for i in range(first, first + len(columns)))
        parts.append(f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({marks})")  # noqa: S608
        first += len(columns)
    ctes = ", ".join(f"i{n} AS ({part})" for n, part in enumerate(parts[:-1]))
    return f"WITH {ctes} {parts[-1]}" if ctes else parts[-1]


def naive(at: datetime) -> datetime:
    return at.astimezone(UTC).replace(tzinfo=None)  # stored as naive UTC (UtcDateTime)


def aware(at: datetime) -> datetime:
    return at.replace(tzinfo=UTC)


@cache
def _consume_sql(account: Table, day: Table, month: Table, orders: Table | None = None) -> str:
    # The account's guarded UPDATE runs first (the others read its row), taking its row lock:
    # one user's draws take turns. A day (month) row is made by its first draw at the
    # allowance less this chance; an existing one is taken from if it has any left. A row
    # missing from `d` or `m` means that limit is exhausted (see consume).
    def period(table: Table, column: str, left: str, param: str) -> str:
        return (
            f"INSERT INTO {table.name} AS t (user_id, activity_id, {column}, {left}) "  # noqa: S608
            f"SELECT $1, $2, {param}, a.{column} - 1 FROM a WHERE a.{column} > 0 "
            f"ON CONFLICT (user_id, activity_id, {column}) "
            f"DO UPDATE SET {left} = t.{left} - 1 WHERE t.{left} > 0 RETURNING t.{left}"
        )

    taken = (
        f"WITH a AS (UPDATE {account.name} SET total_left = total_left - 1 "  # noqa: S608
        "WHERE user_id = $1 AND activity_id = $2 AND total_left > 0 "
        "RETURNING total, total_left, day, month), "
        f"d AS ({period(day, 'day', 'day_left', '$3::varchar')}), "
        f"m AS ({period(month, 'month', 'month_left', '$4::varchar')}) "
        "SELECT a.total, a.total_left, a.day, a.month, "
        "(SELECT day_left FROM d) AS day_left, (SELECT month_left FROM m) AS month_left"
    )
    return f"{taken} FROM a" if orders is None else _with_replay(taken, orders)


def _with_replay(taken: str, orders: Table) -> str:
    # One row always: the account's columns NULL if no chance was taken, the order's NULL if new.
    found = ", ".join(f"o.{name}" for name in ORDER_COLUMNS)
    return (
        f"{taken}, {found} FROM (SELECT 1) AS one LEFT JOIN a ON true "
        f"LEFT JOIN {orders.name} AS o ON o.user_id = $1 AND o.request_key = $5"
    )


REPLAY_AT = 6  # the first of the order's columns in a row of _consume_sql with the lookup


class PgQuotaRepository(SqlQuotaRepository):
    def __init__(self, connection: SqlConnection, tables: ShardTables, driver: Driver) -> None:
        super().__init__(connection, tables)
        self._driver = driver
        quota = (tables.quota_account, tables.quota_day, tables.quota_month)
        self._consume = _consume_sql(*quota)
        self._consume_or_replay = _consume_sql(*quota, tables.raffle_order)

    async def consume(
        self, user_id: str, activity_id: int, day: str, month: str
    ) -> QuotaAccount | None:
        connection = await self._driver()
        if (expected := self._driver.expected) is None or expected[0] != user_id:
            row = await connection.fetchrow(self._consume, user_id, activity_id, day, month)
        else:
            # With the replay lookup, whose snapshot predates any wait for the account's lock:
            # an order of this key committed meanwhile is missed, its twin refused (flush).
            args = (user_id, activity_id, day, month, expected[1])
            row = await connection.fetchrow(self._consume_or_replay, *args)
            found = row[REPLAY_AT] is not None
            self._driver.found[expected] = order_of(row[REPLAY_AT:], aware) if found else None
        if row is None or row["total"] is None:
            return None  # no account, or its total is used up: nothing was taken
        if row["day_left"] is None or row["month_left"] is None:
            await self._give_back(user_id, activity_id, day, month, row)
            return None
        return QuotaAccount(
            user_id=user_id,
            activity_id=activity_id,
            total=row["total"],
            total_left=row["total_left"],
            day=row["day"],
            day_left=row["day_left"],
            month=row["month"],
            month_left=row["month_left"],
        )

    async def _give_back(
        self, user_id: str, activity_id: int, day: str, month: str, row: Any
    ) -> None:
        # The day or the month was exhausted: return what the statement took, in this same
        # transaction, so that committing it is harmless (rare: once a user hits a limit).
        account = {"user_id": user_id, "activity_id": activity_id}
        await self._add(self._account, "total_left", account, 1)
        if row["day_left"] is not None:
            await self._add(self._day, "day_left", {**account, "day": day}, 1)
        if row["month_left"] is not None:
            await self._add(self._month, "month_left", {**account, "month": month}, 1)


@cache
def _select_sql(table: Table, columns: tuple[str, ...], where: tuple[str, ...]) -> str:
    condition = " AND ".join(f"{name} = ${i}" for i, name in enumerate(where, start=1))
    return f"SELECT {', '.join(columns)} FROM {table.name} WHERE {condition}"  # noqa: S608


class PgOrderRepository(SqlOrderRepository):
    def __init__(self, connection: SqlConnection, tables: ShardTables, driver: Driver) -> None:
        super().__init__(connection, tables)
        self._driver = driver

    async def add(self, order: RaffleOrder) -> None:
        self._driver.insert(self._orders, ORDER_COLUMNS, order_values(order, naive))

    def expect(self, user_id: str, request_key: str) -> None:
        self._driver.expected = (user_id, request_key)

    async def by_request(self, user_id: str, request_key: str) -> RaffleOrder | None:
        if (user_id, request_key) in self._driver.found:
            return self._driver.found.pop((user_id, request_key))
        connection = await self._driver()
        query = _select_sql(self._orders, ORDER_COLUMNS, ("user_id", "request_key"))
        row = await connection.fetchrow(query, user_id, request_key)
        return None if row is None else order_of(row, aware)


class PgWinRepository(SqlWinRepository):
    def __init__(self, connection: SqlConnection, tables: ShardTables, driver: Driver) -> None:
        super().__init__(connection, tables)
        self._driver = driver

    async def add(self, win: Win) -> None:
        self._driver.insert(self._table, WIN_COLUMNS, win_values(win, naive))

    async def get(self, order_id: str) -> Win | None:
        connection = await self._driver()
        row = await connection.fetchrow(
            _select_sql(self._table, WIN_READ_COLUMNS, ("order_id",)), order_id
        )
        return None if row is None else win_of(row, aware)


class PgOutboxRepository(SqlOutboxRepository):
    def __init__(self, connection: SqlConnection, tables: ShardTables, driver: Driver) -> None:
        super().__init__(connection, tables)
        self._driver = driver

    async def add(self, message: OutboxMessage) -> None:
        self._driver.insert(self._table, OUTBOX_COLUMNS, outbox_values(message, naive))
