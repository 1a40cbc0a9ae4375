"""One SQL transaction behind the UnitOfWork port, and the engine it runs on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import event, make_url
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from raffle.adapters.sql.config_repositories import (
    SqlActivityRepository,
    SqlCampaignLoads,
    SqlPackRepository,
    SqlSkuRepository,
    SqlUserRepository,
)
from raffle.adapters.sql.connection import SqlConnection, remember_foreign_keys
from raffle.adapters.sql.points_repositories import SqlRebateRuleRepository
from raffle.adapters.sql.prize_repositories import SqlCodePoolRepository
from raffle.adapters.sql.repositories import SqlAwardRepository, SqlStrategyRepository
from raffle.adapters.sql.transaction import TransactionScope
from raffle.service.ports import (
    ActivityRepository,
    AwardRepository,
    CampaignLoads,
    CodePoolRepository,
    PackRepository,
    RebateRuleRepository,
    SkuRepository,
    StrategyRepository,
    UserRepository,
)

SQLITE_BUSY_MS = 5000  # how long a writer waits for another's lock before "database is locked"


class SqlUnitOfWork(TransactionScope):
    """A transaction on the configuration database."""

    awards: AwardRepository
    strategies: StrategyRepository
    activities: ActivityRepository
    packs: PackRepository
    skus: SkuRepository
    users: UserRepository
    rebate_rules: RebateRuleRepository
    code_pools: CodePoolRepository
    campaign_loads: CampaignLoads

    def _bind(self, connection: SqlConnection) -> None:
        self.awards = SqlAwardRepository(connection)
        self.strategies = SqlStrategyRepository(connection)
        self.activities = SqlActivityRepository(connection)
        self.packs = SqlPackRepository(connection)
        self.skus = SqlSkuRepository(connection)
        self.users = SqlUserRepository(connection)
        self.rebate_rules = SqlRebateRuleRepository(connection)
        self.code_pools = SqlCodePoolRepository(connection)
        self.campaign_loads = SqlCampaignLoads(connection)


def create_engine(
    url: str, *, foreign_keys: bool = True, pool_size: int = 10, max_overflow: int = 20
) -> AsyncEngine:
    """An engine for `url` with the settings each database needs; connects only when used.

    `foreign_keys=False` is for migrations on SQLite: rebuilding a table there drops it,
    which with enforced keys would cascade into the rows that refer to it. The pool keeps
    `pool_size` connections (client-server databases): the `max_overflow` above it are
    opened for a peak and closed again at once, each a server process started and ended.
    """
    backend = make_url(url).get_backend_name()
    # No ping on checkout (three round trips a transaction); connections are recycled before
    # servers drop idle ones, and a dead one fails its transaction, which callers may retry.
    pooled = {
        "pool_size": pool_size,
        "max_overflow": max_overflow,
        "pool_recycle": 1800,
        "pool_timeout": 60,
    }
    if backend in ("mysql", "mariadb"):
        # Under REPEATABLE READ, guarded updates of missing rows take gap locks that make
        # concurrent first draws deadlock; READ COMMITTED takes row locks only.
        return create_async_engine(url, isolation_level="READ COMMITTED", **pooled)
    if backend != "sqlite":
        return create_async_engine(url, **pooled)
    engine = create_async_engine(url)
    remember_foreign_keys(engine, foreign_keys)
    sqlite_listeners(engine.sync_engine, foreign_keys=foreign_keys, busy_ms=SQLITE_BUSY_MS)
    return engine


def sqlite_listeners(engine: Engine, *, foreign_keys: bool, busy_ms: int) -> None:
    """Pragmas on connect, and BEGIN IMMEDIATE for every transaction."""
    event.listen(engine, "connect", _sqlite_connect(foreign_keys, busy_ms))
    event.listen(engine, "begin", _sqlite_begin)


def _sqlite_connect(foreign_keys: bool, busy_ms: int) -> Callable[[Any, Any], None]:
    def connect(dbapi_connection: Any, _record: Any) -> None:
        # Python's sqlite3 (before 3.12) begins transactions only before DML, so reads and
        # DDL would run outside them; we take over BEGIN ourselves (see _sqlite_begin).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA foreign_keys = {'ON' if foreign_keys else 'OFF'}")
        cursor.execute("PRAGMA journal_mode = WAL")  # readers do not block the writer
        # In WAL mode NORMAL syncs at checkpoints, not at every commit: a commit survives the
        # process crashing, though not the machine losing power. FULL costs an fsync a draw.
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute(f"PRAGMA busy_timeout = {busy_ms}")
        cursor.close()

    return connect


def _sqlite_begin(connection: Connection) -> None:
    # Take the write lock now, not mid-way. On the DB-API cursor: SQLAlchemy's execution
    # machinery around a statement costs more than the statement, once per transaction.
    dbapi = connection.dialect.loaded_dbapi
    cursor = connection.connection.cursor()
    try:
        cursor.execute("BEGIN IMMEDIATE")
    except dbapi.Error as error:  # as SQLAlchemy would raise it ("database is locked", ...)
        raise DBAPIError.instance("BEGIN IMMEDIATE", None, error, dbapi.Error) from error
    finally:
        cursor.close()
