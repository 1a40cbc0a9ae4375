"""The user dimension spread over databases × tables: routing by user id, a unit of work each."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql import pg_delivery, pg_draw, pg_relay, sqlite_draw
from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.delivery_repositories import SqlDeliveryRepository
from raffle.adapters.sql.delivery_tables import delivery_table
from raffle.adapters.sql.order_repositories import SqlOrderRepository
from raffle.adapters.sql.outbox_repositories import SqlOutboxRepository
from raffle.adapters.sql.points_repositories import SqlPointsRepository, SqlRebateOrderRepository
from raffle.adapters.sql.points_tables import points_tables
from raffle.adapters.sql.prize_repositories import (
    CommittedCouponCodes,
    SqlAccessGrantRepository,
    SqlCodePoolRepository,
    SqlShipmentRepository,
)
from raffle.adapters.sql.prize_tables import prize_tables
from raffle.adapters.sql.quota_repositories import SqlQuotaRepository
from raffle.adapters.sql.shard_tables import ShardTables, shard_tables
from raffle.adapters.sql.topup_repositories import SqlTopUpRepository
from raffle.adapters.sql.transaction import TransactionScope
from raffle.adapters.sql.win_repositories import SqlWinRepository
from raffle.service.ports import (
    AccessGrantRepository,
    CouponCodes,
    DeliveryRepository,
    DrawBatches,
    OrderRepository,
    OutboxRepository,
    PointsRepository,
    QuotaRepository,
    RebateOrderRepository,
    ShardUnitOfWork,
    ShipmentRepository,
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
    points: PointsRepository
    rebates: RebateOrderRepository
    codes: CouponCodes
    grants: AccessGrantRepository
    shipments: ShipmentRepository
    deliveries: DeliveryRepository

    def __init__(
        self, engine: AsyncEngine, tables: ShardTables, *, index: int = 0, config: AsyncEngine
    ) -> None:
        super().__init__(engine)
        self._tables = tables
        self._index = index  # the shard table index, which names the tables of every module
        self._engine = engine
        self._config = config  # the database of code pools
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
        self.points = SqlPointsRepository(connection, points_tables(self._index))
        self.rebates = SqlRebateOrderRepository(connection, points_tables(self._index))
        prizes = prize_tables(self._index)
        self.grants = SqlAccessGrantRepository(connection, prizes)
        self.shipments = SqlShipmentRepository(connection, prizes)
        # A shard on the configuration database claims codes in its own transaction: one
        # commit for the claim and the award record (and on SQLite, which has one writer, a
        # second transaction would wait for this one forever).
        self.codes = (
            SqlCodePoolRepository(connection)
            if self._engine is self._config
            else CommittedCouponCodes(self._config)
        )
        deliveries = delivery_table(self._index)
        self.deliveries = SqlDeliveryRepository(connection, deliveries, tables.award_record)
        if self._driver is not None:  # a delivery batch's statements on the driver
            self.top_ups = pg_delivery.PgTopUpRepository(connection, tables, self._driver)
            self.deliveries = pg_delivery.PgDeliveryRepository(
                connection, deliveries, tables.award_record, self._driver
            )

    def _draw_repositories(
        self, connection: SqlConnection
    ) -> tuple[QuotaRepository, OrderRepository, WinRepository, OutboxRepository]:
        """The repositories of the draw's statements: on PostgreSQL and SQLite they run them
        on the driver directly (pg_draw, sqlite_draw), in this transaction."""
        tables = self._tables
        if self._driver is not None:
            driver = self._driver
            return (
                pg_delivery.PgDeliveryQuotaRepository(connection, tables, driver),
                pg_draw.PgOrderRepository(connection, tables, driver),
                pg_delivery.PgDeliveryWinRepository(connection, tables, driver),
                pg_relay.PgRelayOutboxRepository(connection, tables, driver),
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
    """Databases (one engine each) that all hold shard tables 0 to `tables` - 1; the first
    is the configuration database."""

    def __init__(
        self, engines: Sequence[AsyncEngine], tables: int, batches: DrawBatches | None = None
    ) -> None:
        if not engines or tables < 1:
            raise ValueError("a shard layout needs at least one database and one table")
        self._engines = tuple(engines)
        self._tables = tables
        self.batches = batches  # draws in batches (pg_draw_batch); None: each commits alone

    def for_user(self, user_id: str) -> SqlShardUnitOfWork:
        database, table = route(user_id, len(self._engines), self._tables)
        return self._unit(self._engines[database], table)

    def index(self, user_id: str) -> int:
        database, table = route(user_id, len(self._engines), self._tables)
        return database * self._tables + table

    def every(self) -> list[ShardUnitOfWork]:
        """One unit of work per shard, in the order of `route`'s index (database-major)."""
        return [
            self._unit(engine, table) for engine in self._engines for table in range(self._tables)
        ]

    def _unit(self, engine: AsyncEngine, table: int) -> SqlShardUnitOfWork:
        return SqlShardUnitOfWork(engine, shard_tables(table), index=table, config=self._engines[0])
