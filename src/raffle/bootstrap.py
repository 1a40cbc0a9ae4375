"""The composition root: the only place that wires adapters to the service layer."""

from __future__ import annotations

from dataclasses import dataclass, field

from redis.asyncio import BlockingConnectionPool, Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.clock import SystemClock
from raffle.adapters.passwords import PasswordHasher
from raffle.adapters.prize_stock import MemoryPrizeStock, RedisPrizeStock
from raffle.adapters.randomness import SystemRandomSource
from raffle.adapters.rate_limits import MemoryRateLimiter, RedisRateLimiter
from raffle.adapters.sessions import RedisSessionStore, SqlSessionStore
from raffle.adapters.sql.idempotency import SqlIdempotencyStore
from raffle.adapters.sql.shards import SqlShards
from raffle.adapters.sql.stock_claims import SqlStockClaims
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.randomness import RandomSource
from raffle.service.catalogue import Catalogue
from raffle.service.ports import (
    Clock,
    IdempotencyStore,
    PrizeStock,
    RateLimiter,
    SessionStore,
    Shards,
    UnitOfWork,
)
from raffle.service.stock import configured_stock, stock_levels
from raffle.settings import Settings


@dataclass
class Raffle:
    """A wired application: everything entrypoints need to run use cases."""

    settings: Settings
    engines: list[AsyncEngine]  # the configuration database first
    clock: Clock
    catalogue: Catalogue
    shards: Shards
    stock: PrizeStock
    sessions: SessionStore
    limiter: RateLimiter
    idempotency: IdempotencyStore
    hasher: PasswordHasher = field(default_factory=PasswordHasher)
    rng: RandomSource = field(default_factory=SystemRandomSource)
    redis: Redis | None = None

    def uow(self) -> UnitOfWork:
        return SqlUnitOfWork(self.engines[0])

    async def start(self) -> None:
        """Warm what lives in this process: the embedded stock counters, from the database."""
        if isinstance(self.stock, MemoryPrizeStock):
            self.stock.reset(await stock_levels(self.uow, self.shards))

    async def close(self) -> None:
        if self.redis is not None:
            await self.redis.aclose()
        for engine in self.engines:
            await engine.dispose()


def bootstrap(settings: Settings | None = None, *, clock: Clock | None = None) -> Raffle:
    """Wire real adapters for `settings`; nothing connects until first used."""
    settings = settings or Settings()
    clock = clock or SystemClock()
    engines = [create_engine(url) for url in settings.database_urls]
    config = engines[0]

    def uow() -> UnitOfWork:
        return SqlUnitOfWork(config)

    stock: PrizeStock
    sessions: SessionStore
    limiter: RateLimiter
    # A blocking pool: under load callers wait for a connection instead of failing.
    redis = (
        Redis.from_pool(BlockingConnectionPool.from_url(settings.redis_url, max_connections=200))
        if settings.redis_url
        else None
    )
    if redis is None:  # one process: counters in memory, sessions in the database
        stock = MemoryPrizeStock({})
        sessions = SqlSessionStore(config, clock)
        limiter = MemoryRateLimiter(clock)
    else:

        async def stocks(strategy_id: int) -> dict[int, int]:
            return await configured_stock(uow, strategy_id)

        stock = RedisPrizeStock(redis, SqlStockClaims(config), stocks, clock)
        sessions = RedisSessionStore(redis, clock)
        limiter = RedisRateLimiter(redis)
    return Raffle(
        settings=settings,
        engines=engines,
        clock=clock,
        catalogue=Catalogue(uow, ttl=settings.catalogue_ttl_seconds),
        shards=SqlShards(engines, settings.shard_tables),
        stock=stock,
        sessions=sessions,
        limiter=limiter,
        idempotency=SqlIdempotencyStore(config, clock),
        redis=redis,
    )
