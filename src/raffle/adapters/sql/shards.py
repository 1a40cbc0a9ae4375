"""The user dimension spread over databases × tables: routing by user id, a unit of work each."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql import pg_draw, sqlite_draw
from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.shard_repositories import (
    SqlOrderRepository,
    SqlOutboxRepository,
    SqlQuotaRepository,
    SqlTopUpRepository,
    SqlWinRepository,
)
from raffle.adapters.sql.shard_tables import ShardTables, shard_tables
from raffle.adapters.sql.transaction import TransactionScope
from raffle.service.ports import (
    OrderRepository,
    OutboxRepository,
    QuotaRepository,
    ShardUnitOfWork,
    TopUpRepository,
    WinRepository,
)


def route(user_id: str, databases: int, tables: int) -> tuple[int, int]:
    """The (database, table) indexes that hold `user_id`'s rows.

    CRC-32 rather than `hash()`, which is salted per process: every process, and every
    release, must send a user to the same shard. Changing the counts moves users, so it
    needs a data migration.
    """
    if databases < 1 or tables < 1:
        raise ValueError("a shard layout needs at least one database and one table")
    index = zlib.crc32(user_id.encode()) % (databases * tables)
    return index // tables, index % tables


class SqlShardUnitOfWork(TransactionScope):
    """One transaction on one shard table index of one database."""

    quotas: QuotaRepository
    top_ups: TopUpRepository
    orders: OrderRepository
    wins: WinRepository
    outbox: OutboxRepository

    def __init__(self, engine: AsyncEngine, tables: ShardTables) -> None:
        super().__init__(engine)
        self._tables = tables
        self._driver: pg_draw.Driver | None = None

    def _bind(self, connection: SqlConnection) -> None:
        tables = self._tables
        self._driver = None
        if (pg := pg_draw.driver_for(connection)) is not None:
            # Every repository gets the connection that first sends the INSERTs the draw's
            # repositories hold back (see pg_draw).
            connection, self._driver = pg
        self.top_ups = SqlTopUpRepository(connection, tables)
        self.quotas, self.orders, self.wins, self.outbox = self._draw_repositories(connection)

    def _draw_repositories(
        self, connection: SqlConnection
    ) -> tuple[QuotaRepository, OrderRepository, WinRepository, OutboxRepository]:
        """The repositories of the draw's statements: on PostgreSQL and SQLite they run them
        on the driver directly (pg_draw, sqlite_draw), in this transaction."""
        tables = self._tables
        if self._driver is not None:
            driver = self._driver
            return (
                pg_draw.PgQuotaRepository(connection, tables, driver),
                pg_draw.PgOrderRepository(connection, tables, driver),
                pg_draw.PgWinRepository(connection, tables, driver),
                pg_draw.PgOutboxRepository(connection, tables, driver),
            )
        if (sqlite := sqlite_draw.driver_for(connection)) is not None:
            return (
                sqlite_draw.SqliteQuotaRepository(connection, tables, sqlite),
                sqlite_draw.SqliteOrderRepository(connection, tables, sqlite),
                sqlite_draw.SqliteWinRepository(connection, tables, sqlite),
                sqlite_draw.SqliteOutboxRepository(connection, tables, sqlite),
            )
        return (
            SqlQuotaRepository(connection, tables),
            SqlOrderRepository(connection, tables),
            SqlWinRepository(connection, tables),
            SqlOutboxRepository(connection, tables),
        )

    async def commit(self) -> None:
        if self._driver is not None:
            await self._driver.flush()  # the INSERTs it held back
        await super().commit()


class SqlShards:
    """Databases (one engine each) that all hold shard tables 0 to `tables` - 1."""

    def __init__(self, engines: Sequence[AsyncEngine], tables: int) -> None:
        if not engines or tables < 1:
            raise ValueError("a shard layout needs at least one database and one table")
        self._engines = tuple(engines)
        self._tables = tables

    def for_user(self, user_id: str) -> SqlShardUnitOfWork:
        database, table = route(user_id, len(self._engines), self._tables)
        return SqlShardUnitOfWork(self._engines[database], shard_tables(table))

    def every(self) -> list[ShardUnitOfWork]:
        """One unit of work per shard, in the order of `route`'s index (database-major)."""
        return [
            SqlShardUnitOfWork(engine, shard_tables(table))
            for engine in self._engines
            for table in range(self._tables)
        ]
