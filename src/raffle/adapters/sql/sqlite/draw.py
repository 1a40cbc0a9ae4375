"""Draws in batches on an SQLite file (see service/draw_batch.py): the batch's draws share
one transaction and its commit, each step a few statements per draw on the sqlite3 connection
under the process's writer turn (connection.py); the rare steps through the repositories.

An SQLite statement takes microseconds, so a step is a loop over the draws rather than one
statement for all; what the batch shares is the transaction: its turn, BEGIN and COMMIT, and
the pages the commit writes to the WAL. The SQL is put together from our own table and
column names only; every value is a bind parameter, hence the `noqa: S608`s.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime
from functools import cache, lru_cache
from types import TracebackType

from sqlalchemy import Table
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.connection import SqlConnection, SqliteConnection
from raffle.adapters.sql.lanes import DrawLanes
from raffle.adapters.sql.repositories.participation import SqlCounterRepository
from raffle.adapters.sql.repositories.points import SqlPointsRepository
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
from raffle.adapters.sql.tables.participation import participation_table
from raffle.adapters.sql.tables.points import points_tables
from raffle.adapters.sql.tables.shard import ShardTables, shard_tables
from raffle.adapters.sql.transaction import TransactionScope
from raffle.domain.draws import OutboxMessage, RaffleOrder, Win
from raffle.domain.policies import Standing
from raffle.domain.quota import QuotaAccount, QuotaPack
from raffle.service.ports import Chance, Claim, Counting, Reading

_FORMAT = "%Y-%m-%d %H:%M:%S.%f"  # how SQLAlchemy stores a DateTime on SQLite


@lru_cache(maxsize=4)  # a batch stores few instants, each three times: order, win, message
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


@cache
def _give_back_sql(table: Table, left: str, key: tuple[str, ...]) -> str:
    condition = " AND ".join(f"{name} = ?" for name in key)
    return f"UPDATE {table.name} SET {left} = {left} + 1 WHERE {condition}"  # noqa: S608


@cache
def _open_sql(account: Table) -> str:
    return (
        f"INSERT INTO {account.name} "  # noqa: S608
        "(user_id, activity_id, total, total_left, day, month) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (user_id, activity_id) DO NOTHING RETURNING total"
    )


@cache
def _insert_sql(table: Table, columns: tuple[str, ...]) -> str:
    marks = ", ".join("?" for _ in columns)
    return f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({marks})"  # noqa: S608


@cache
def _select_sql(table: Table, columns: tuple[str, ...], where: tuple[str, ...]) -> str:
    condition = " AND ".join(f"{name} = ?" for name in where)
    return f"SELECT {', '.join(columns)} FROM {table.name} WHERE {condition}"  # noqa: S608


class SqliteLane:
    """An SQLite file's lane: the engine its batches take the process's writer turn on."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.failed = 0  # batches rolled back on an error

    async def close(self) -> None:
        return None  # its connection is the engine's (connection.py), closed with it


class SqliteDrawBatch(TransactionScope):
    def __init__(self, lane: SqliteLane, batches: SqliteDrawBatches) -> None:
        super().__init__(lane.engine)
        self._lane = lane
        self._table = batches.table
        self._sizes = batches.sizes
        self._connection: SqliteConnection
        self._execute: Callable[..., sqlite3.Cursor]  # the sqlite3 connection's
        self._claims: Sequence[Claim] = ()
        self._taken: set[int] = set()  # the draws whose chance this batch took

    def _bind(self, connection: SqlConnection) -> None:
        if not isinstance(connection, SqliteConnection):  # an SQLite file's, see bootstrap
            raise TypeError("an SQLite draw batch runs on an SQLite file")
        self._connection, self._execute = connection, connection.driver().execute

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._lane.failed += exc is not None
        await super().__aexit__(exc_type, exc, tb)

    async def consume(
        self, claims: Sequence[Claim], reads: Mapping[int, Reading] | None = None
    ) -> list[Chance]:
        if len({claim[0] for claim in claims}) != len(claims):
            raise ValueError("a batch holds one draw per user")
        self._sizes[len(claims)] += 1
        self._claims, self._taken = claims, set()
        return [self._chance(n, claim) for n, claim in enumerate(claims)]

    def _chance(self, n: int, claim: Claim) -> Chance:
        user_id, activity_id, day, month, key = claim
        tables = shard_tables(self._table(user_id))
        execute = self._execute
        if key is not None:
            query = _select_sql(tables.raffle_order, ORDER_COLUMNS, ("user_id", "request_key"))
            if (found := execute(query, (user_id, key)).fetchone()) is not None:
                return Chance(None, True, order_of(found, _read))  # no chance taken
        row = execute(_account_sql(tables.quota_account), (user_id, activity_id)).fetchone()
        if row is None:
            return Chance(None, self._opened(tables, user_id, activity_id), None)
        total, total_left, per_day, per_month = row
        day_left = self._take(tables.quota_day, "day", claim, day, per_day)
        month_left = None
        if day_left is not None:
            month_left = self._take(tables.quota_month, "month", claim, month, per_month)
        if day_left is None or month_left is None:
            # What was taken goes back in this transaction.
            self._give_back(tables, claim, day=day_left is not None, month=False)
            return Chance(None, True, None)
        self._taken.add(n)
        account = QuotaAccount(
            user_id, activity_id, total, total_left, per_day, day_left, per_month, month_left
        )
        return Chance(account, True, None)

    def _opened(self, tables: ShardTables, user_id: str, activity_id: int) -> bool:
        account = tables.quota_account
        query = _select_sql(account, ("total",), ("user_id", "activity_id"))
        return self._execute(query, (user_id, activity_id)).fetchone() is not None

    def _take(
        self, table: Table, column: str, claim: Claim, period: str, allowance: int
    ) -> int | None:
        statement = _period_sql(table, column, f"{column}_left")
        params = (claim[0], claim[1], period, allowance - 1, allowance)
        row = self._execute(statement, params).fetchone()
        return None if row is None else int(row[0])

    def _give_back(self, tables: ShardTables, claim: Claim, *, day: bool, month: bool) -> None:
        user_id, activity_id, on_day, in_month, _ = claim
        execute, key = self._execute, ("user_id", "activity_id")
        execute(_give_back_sql(tables.quota_account, "total_left", key), (user_id, activity_id))
        if day:
            statement = _give_back_sql(tables.quota_day, "day_left", (*key, "day"))
            execute(statement, (user_id, activity_id, on_day))
        if month:
            statement = _give_back_sql(tables.quota_month, "month_left", (*key, "month"))
            execute(statement, (user_id, activity_id, in_month))

    async def open_accounts(self, welcomes: Mapping[int, QuotaPack]) -> dict[int, QuotaAccount]:
        if any(pack.chances <= 0 for pack in welcomes.values()):
            raise ValueError("a welcome pack opened in a batch has a chance in every limit")
        opened: dict[int, QuotaAccount] = {}
        for n, pack in welcomes.items():
            user_id, activity_id, day, month, _ = claim = self._claims[n]
            tables = shard_tables(self._table(user_id))
            values = (user_id, activity_id, pack.total, pack.total - 1, pack.day, pack.month)
            if self._execute(_open_sql(tables.quota_account), values).fetchone() is None:
                continue  # opened meanwhile: left as it is, the draw goes again
            day_left = self._take(tables.quota_day, "day", claim, day, pack.day)
            month_left = self._take(tables.quota_month, "month", claim, month, pack.month)
            if day_left is None or month_left is None:  # a pack with a chance in each has one
                raise RuntimeError("a new account's day or month had no chance left")
            self._taken.add(n)
            opened[n] = QuotaAccount(
                user_id, activity_id, pack.total, pack.total - 1, pack.day, day_left,
                pack.month, month_left,
            )  # fmt: skip
        return opened

    async def wins(self, orders: Sequence[RaffleOrder]) -> dict[str, Win]:
        found: dict[str, Win] = {}
        for order in orders:
            table = shard_tables(self._table(order.user_id)).award_record
            query = _select_sql(table, WIN_READ_COLUMNS, ("order_id",))
            if (row := self._execute(query, (order.order_id,)).fetchone()) is not None:
                found[order.order_id] = win_of(row, _read)
        return found

    async def give_back(self, draws: Collection[int]) -> None:
        for n in draws:
            if n in self._taken:
                self._taken.discard(n)
                claim = self._claims[n]
                tables = shard_tables(self._table(claim[0]))
                self._give_back(tables, claim, day=True, month=True)

    async def standings(self, reads: Mapping[int, Reading]) -> dict[int, Standing]:
        found: dict[int, Standing] = {}
        for n, read in reads.items():
            user_id, activity_id, *_ = self._claims[n]
            index = self._table(user_id)
            counts = {}
            if read.counters:
                counters = SqlCounterRepository(self._connection, participation_table(index))
                counts = await counters.counts(user_id, activity_id, read.counters)
            balance = 0
            if read.balance:
                points = SqlPointsRepository(self._connection, points_tables(index))
                if (account := await points.account(user_id)) is not None:
                    balance = account.available
            found[n] = Standing(counts, balance)
        return found

    async def count(self, counts: Mapping[int, Counting]) -> None:
        for n, counted in counts.items():
            user_id, activity_id, *_ = self._claims[n]
            index = self._table(user_id)
            counters = SqlCounterRepository(self._connection, participation_table(index))
            await counters.add(user_id, activity_id, counted.counters)
            if counted.debit is not None:  # the balance was read, and is held, in standings
                await SqlPointsRepository(self._connection, points_tables(index)).add(counted.debit)

    async def record(self, draws: Sequence[tuple[RaffleOrder, Win, OutboxMessage]]) -> None:
        execute = self._execute
        for order, win, message in draws:
            tables = shard_tables(self._table(order.user_id))
            execute(_insert_sql(tables.raffle_order, ORDER_COLUMNS), order_values(order, _stored))
            execute(_insert_sql(tables.award_record, WIN_COLUMNS), win_values(win, _stored))
            execute(_insert_sql(tables.outbox, OUTBOX_COLUMNS), outbox_values(message, _stored))

    async def announce(self, notices: Sequence[tuple[str, OutboxMessage]]) -> None:
        for user_id, message in notices:
            outbox = shard_tables(self._table(user_id)).outbox
            self._execute(_insert_sql(outbox, OUTBOX_COLUMNS), outbox_values(message, _stored))


class SqliteDrawBatches(DrawLanes[SqliteLane, SqliteDrawBatch]):
    """A lane per SQLite file."""

    def __init__(self, engines: Sequence[AsyncEngine], tables: int, size: int) -> None:
        super().__init__(engines, tables, size, SqliteLane, SqliteDrawBatch)
