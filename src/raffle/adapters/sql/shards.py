"""The user dimension spread over databases × tables: routing by user id, a unit of work each."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.audit import SqlAuditLog
from raffle.adapters.sql.repositories.delivery import SqlDeliveryRepository
from raffle.adapters.sql.repositories.orders import SqlOrderRepository
from raffle.adapters.sql.repositories.outbox import SqlOutboxRepository
from raffle.adapters.sql.repositories.participation import SqlCounterRepository
from raffle.adapters.sql.repositories.payments import SqlPaymentOrderRepository
from raffle.adapters.sql.repositories.points import SqlPointsRepository, SqlRebateOrderRepository
from raffle.adapters.sql.repositories.prize_claims import SqlPrizeClaimRepository
from raffle.adapters.sql.repositories.prizes import (
    CommittedCouponCodes,
    SqlAccessGrantRepository,
    SqlCodePoolRepository,
    SqlShipmentRepository,
)
from raffle.adapters.sql.repositories.quotas import SqlQuotaRepository
from raffle.adapters.sql.repositories.top_ups import SqlTopUpRepository
from raffle.adapters.sql.repositories.wins import SqlWinRepository
from raffle.adapters.sql.tables.audit import audit_tables
from raffle.adapters.sql.tables.delivery import delivery_table
from raffle.adapters.sql.tables.participation import participation_table
from raffle.adapters.sql.tables.payments import payment_tables
from raffle.adapters.sql.tables.points import points_tables
from raffle.adapters.sql.tables.prize_claims import prize_claim_table
from raffle.adapters.sql.tables.prizes import prize_tables
from raffle.adapters.sql.tables.shard import ShardTables, shard_tables
from raffle.adapters.sql.transaction import TransactionScope
from raffle.domain.audit import shard_chain
from raffle.service.drawing import DrawsAlone
from raffle.service.ports import (
    AccessGrantRepository,
    CouponCodes,
    DeliveryRepository,
    DrawStore,
    OrderRepository,
    OutboxRepository,
    PointsRepository,
    PrizeClaimRepository,
    QuotaRepository,
    RebateOrderRepository,
    ShardUnitOfWork,
    ShipmentRepository,
    TopUpRepository,
    WinRepository,
)
from raffle.service.ports.audit import AuditLog
from raffle.service.ports.participation import CounterRepository
from raffle.service.ports.payment_orders import PaymentOrderRepository


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
    """One transaction on one shard table index of one database, through the portable
    repositories; a backend's own unit of work (postgres/shards) replaces those it
    runs faster, and bootstrap picks it."""

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
    counters: CounterRepository
    prize_claims: PrizeClaimRepository
    payments: PaymentOrderRepository
    audit: AuditLog

    def __init__(
        self,
        engine: AsyncEngine,
        tables: ShardTables,
        *,
        index: int = 0,
        config: AsyncEngine,
        database: int = 0,
    ) -> None:
        super().__init__(engine)
        self.tables = tables
        self.index = index  # the shard table index, which names the tables of every module
        self.database = database  # the position of `engine` among the shard databases
        self._engine = engine
        self._config = config  # the database of code pools

    def _bind(self, connection: SqlConnection) -> None:
        tables = self.tables
        self.quotas = SqlQuotaRepository(connection, tables)
        self.top_ups = SqlTopUpRepository(connection, tables)
        self.orders = SqlOrderRepository(connection, tables)
        self.wins = SqlWinRepository(connection, tables)
        self.outbox = SqlOutboxRepository(connection, tables)
        self.points = SqlPointsRepository(connection, points_tables(self.index))
        self.counters = SqlCounterRepository(connection, participation_table(self.index))
        self.rebates = SqlRebateOrderRepository(connection, points_tables(self.index))
        prizes = prize_tables(self.index)
        self.grants = SqlAccessGrantRepository(connection, prizes)
        self.shipments = SqlShipmentRepository(connection, prizes)
        self.prize_claims = SqlPrizeClaimRepository(
            connection, prize_claim_table(self.index), tables.award_record
        )
        # A shard on the configuration database claims codes in its own transaction: one
        # commit for the claim and the award record (and on SQLite, which has one writer, a
        # second transaction would wait for this one forever).
        self.codes = (
            SqlCodePoolRepository(connection)
            if self._engine is self._config
            else CommittedCouponCodes(self._config)
        )
        deliveries = delivery_table(self.index)
        self.deliveries = SqlDeliveryRepository(connection, deliveries, tables.award_record)
        self.payments = SqlPaymentOrderRepository(connection, payment_tables(self.index))
        chain = shard_chain(self.database, self.index)
        self.audit = SqlAuditLog(connection, audit_tables(self.index), chain)


class SqlShards:
    """Databases (one engine each) that all hold shard tables 0 to `tables` - 1; the first
    is the configuration database. Their backend's unit of work and draw store are given by
    bootstrap; by default the portable repositories, and each draw alone in them."""

    def __init__(
        self,
        engines: Sequence[AsyncEngine],
        tables: int,
        unit: type[SqlShardUnitOfWork] = SqlShardUnitOfWork,
        draws: DrawStore | None = None,
    ) -> None:
        if not engines or tables < 1:
            raise ValueError("a shard layout needs at least one database and one table")
        self._engines = tuple(engines)
        self._tables = tables
        self._unit = unit  # the backend's
        self.draws = draws or DrawsAlone(self)

    def for_user(self, user_id: str) -> SqlShardUnitOfWork:
        database, table = route(user_id, len(self._engines), self._tables)
        return self._on(database, table)

    def index(self, user_id: str) -> int:
        database, table = route(user_id, len(self._engines), self._tables)
        return database * self._tables + table

    def every(self) -> list[ShardUnitOfWork]:
        """One unit of work per shard, in the order of `route`'s index (database-major)."""
        return [
            self._on(database, table)
            for database in range(len(self._engines))
            for table in range(self._tables)
        ]

    def _on(self, database: int, table: int) -> SqlShardUnitOfWork:
        return self._unit(
            self._engines[database],
            shard_tables(table),
            index=table,
            config=self._engines[0],
            database=database,
        )
