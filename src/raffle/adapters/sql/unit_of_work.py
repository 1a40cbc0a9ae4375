"""One SQL transaction behind the UnitOfWork port, and the engine it runs on."""

from __future__ import annotations

from sqlalchemy import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from raffle.adapters.sql.connection import SqlConnection, remember_foreign_keys
from raffle.adapters.sql.repositories.audit import SqlAuditLog
from raffle.adapters.sql.repositories.catalogue import SqlAwardRepository, SqlStrategyRepository
from raffle.adapters.sql.repositories.config import (
    SqlActivityRepository,
    SqlCampaignLoads,
    SqlPackRepository,
    SqlSkuRepository,
    SqlUserRepository,
)
from raffle.adapters.sql.repositories.content import SqlContentRepository
from raffle.adapters.sql.repositories.fairness import SqlSeedRepository
from raffle.adapters.sql.repositories.flash_sales import SqlFlashSaleRepository
from raffle.adapters.sql.repositories.join_codes import SqlJoinCodeRepository
from raffle.adapters.sql.repositories.participation import SqlParticipationRepository
from raffle.adapters.sql.repositories.points import SqlRebateRuleRepository
from raffle.adapters.sql.repositories.prize_images import SqlPrizeImageRepository
from raffle.adapters.sql.repositories.prizes import SqlCodePoolRepository
from raffle.adapters.sql.repositories.profiles import SqlProfileRepository
from raffle.adapters.sql.repositories.route_trees import SqlRouteTreeRepository
from raffle.adapters.sql.repositories.scheduled import SqlScheduledDraws
from raffle.adapters.sql.repositories.tickets import SqlTicketRepository
from raffle.adapters.sql.sqlite_setup import sqlite_listeners
from raffle.adapters.sql.tables.audit import config_audit
from raffle.adapters.sql.transaction import TransactionScope
from raffle.domain.audit import CONFIG_CHAIN
from raffle.service.ports import (
    ActivityRepository,
    AwardRepository,
    CampaignLoads,
    CodePoolRepository,
    PackRepository,
    PrizeImageRepository,
    RebateRuleRepository,
    RouteTreeRepository,
    SkuRepository,
    StrategyRepository,
    UserRepository,
)
from raffle.service.ports.audiences import ProfileRepository
from raffle.service.ports.audit import AuditLog
from raffle.service.ports.content import ContentRepository
from raffle.service.ports.fairness import SeedRepository
from raffle.service.ports.flash_sales import FlashSaleRepository
from raffle.service.ports.join_codes import JoinCodeRepository
from raffle.service.ports.participation import ParticipationRepository
from raffle.service.ports.scheduled import ScheduledDraws
from raffle.service.ports.tickets import TicketRepository

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
    participation: ParticipationRepository
    profiles: ProfileRepository
    route_trees: RouteTreeRepository
    prize_images: PrizeImageRepository
    content: ContentRepository
    join_codes: JoinCodeRepository
    seeds: SeedRepository
    audit: AuditLog
    tickets: TicketRepository
    flash_sales: FlashSaleRepository
    scheduled: ScheduledDraws

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
        self.participation = SqlParticipationRepository(connection)
        self.profiles = SqlProfileRepository(connection)
        self.route_trees = SqlRouteTreeRepository(connection)
        self.prize_images = SqlPrizeImageRepository(connection)
        self.content = SqlContentRepository(connection)
        self.join_codes = SqlJoinCodeRepository(connection)
        self.seeds = SqlSeedRepository(connection)
        self.audit = SqlAuditLog(connection, config_audit, CONFIG_CHAIN)
        self.tickets = SqlTicketRepository(connection)
        self.flash_sales = SqlFlashSaleRepository(connection)
        self.scheduled = SqlScheduledDraws(connection)


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
