"""A shard's unit of work on PostgreSQL with asyncpg: delivery's and the relay's batch
statements on asyncpg directly (postgres/delivery, postgres/relay), the rest through SQLAlchemy."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.postgres.delivery import (
    PgDeliveryRepository,
    PgQuotaRepository,
    PgTopUpRepository,
    PgWinRepository,
)
from raffle.adapters.sql.postgres.relay import PgOutboxRepository
from raffle.adapters.sql.postgres.statements import PgStatements
from raffle.adapters.sql.shards import SqlShardUnitOfWork
from raffle.adapters.sql.tables.delivery import delivery_table


class PgShardUnitOfWork(SqlShardUnitOfWork):
    def _bind(self, connection: SqlConnection) -> None:
        super()._bind(connection)
        if not isinstance(connection, AsyncConnection):  # what TransactionScope opens here
            raise TypeError("a PostgreSQL unit of work runs on an AsyncConnection")
        sql, tables = PgStatements(connection), self.tables
        self.quotas = PgQuotaRepository(connection, tables, sql)
        self.top_ups = PgTopUpRepository(connection, tables, sql)
        self.wins = PgWinRepository(connection, tables, sql)
        self.outbox = PgOutboxRepository(connection, tables, sql)
        deliveries = delivery_table(self.index)
        self.deliveries = PgDeliveryRepository(connection, deliveries, tables.award_record, sql)
