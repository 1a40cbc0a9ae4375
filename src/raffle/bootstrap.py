"""The composition root: the only place that wires adapters to the service layer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import parse_url
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.broker.memory import MemoryBroker
from raffle.adapters.broker.rabbit import RabbitBroker
from raffle.adapters.chance_hints import MemoryChanceHints, RedisChanceHints
from raffle.adapters.clock import SystemClock
from raffle.adapters.passwords import PasswordHasher
from raffle.adapters.prize_stock import MemoryPrizeStock, RedisPrizeStock
from raffle.adapters.randomness import SystemRandomSource
from raffle.adapters.rate_limits import MemoryRateLimiter, RedisRateLimiter
from raffle.adapters.redis_cluster import ClusterCommands
from raffle.adapters.redis_commands import RedisClient, RedisCommands
from raffle.adapters.redis_pipeline import SharedPipeline
from raffle.adapters.sessions import RedisSessionStore, SqlSessionStore
from raffle.adapters.sign_in_calendar import DatabaseSignInCalendar, RedisSignInCalendar
from raffle.adapters.sql.connection import sqlite_file
from raffle.adapters.sql.mariadb.draw_batch import MariaDrawBatches
from raffle.adapters.sql.postgres.draw_batch import PgDrawBatches
from raffle.adapters.sql.postgres.shards import PgShardUnitOfWork
from raffle.adapters.sql.repositories.idempotency import SqlIdempotencyStore
from raffle.adapters.sql.shards import SqlShards
from raffle.adapters.sql.sqlite.draw import SqliteShardUnitOfWork
from raffle.adapters.sql.stock_claims import SqlStockClaims
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.delivery import WON
from raffle.domain.randomness import RandomSource
from raffle.service.catalogue import Catalogue
from raffle.service.deliverers import DeliveryContext
from raffle.service.draw_batch import BatchedDraws
from raffle.service.ports import (
    Broker,
    ChanceHints,
    Clock,
    IdempotencyStore,
    PrizeStock,
    RateLimiter,
    SessionStore,
    Shards,
    SignInCalendar,
    UnitOfWork,
)
from raffle.service.rebates import signed_days
from raffle.service.reconcile import ClaimCounts
from raffle.service.stock import configured_stock, units_left
from raffle.service.stock_sync import ClaimLedger
from raffle.settings import Settings

Closing = list[Callable[[], Awaitable[None]]]


@dataclass
class Raffle:
    """A wired application: everything entrypoints need to run use cases."""

    settings: Settings
    engines: list[AsyncEngine]  # the configuration database first, then shards and pools
    clock: Clock
    catalogue: Catalogue
    shards: Shards
    stock: PrizeStock
    sessions: SessionStore
    limiter: RateLimiter
    idempotency: IdempotencyStore
    calendar: SignInCalendar
    broker: Broker
    hints: ChanceHints  # marks for refusing draws of users without a chance, fast
    claims: ClaimCounts | None = None  # stock claims per prize, where a cache can lose data
    ledger: ClaimLedger | None = None  # the claims themselves, for the stock-sync job
    hasher: PasswordHasher = field(default_factory=PasswordHasher)
    rng: RandomSource = field(default_factory=SystemRandomSource)
    redis: RedisClient | None = None
    redis_commands: RedisCommands | None = None  # the hot commands' shared round trips
    closing: Closing = field(default_factory=list)  # closed by close(), before redis

    def uow(self) -> UnitOfWork:
        return SqlUnitOfWork(self.engines[0])

    def delivery(self) -> DeliveryContext:
        return DeliveryContext(self.catalogue, self.uow, self.shards, self.clock, self.hints)

    async def start(self) -> None:
        """Connect and check the databases answer, so a bad URL fails at start-up."""
        for engine in self.engines:
            async with engine.connect():
                pass

    async def close(self) -> None:
        await self.broker.close()
        for close in self.closing:
            await close()
        if self.redis is not None:
            await self.redis.aclose()
        await self.shards.draws.close()
        for engine in self.engines:
            await engine.dispose()


def bootstrap(settings: Settings | None = None, *, clock: Clock | None = None) -> Raffle:
    """Wire real adapters for `settings`; nothing connects until first used."""
    settings = settings or Settings()
    clock = clock or SystemClock()
    databases = [_engine(url, settings) for url in settings.database_urls]
    config = databases[0]
    engines = list(databases)  # what close() disposes of

    def uow() -> UnitOfWork:
        return SqlUnitOfWork(config)

    stock: PrizeStock
    sessions: SessionStore
    limiter: RateLimiter
    hints: ChanceHints
    redis, commands, closing = _redis(settings)
    shards = sql_shards(databases, settings.shard_tables, settings.draw_batch_size)
    claims: SqlStockClaims | None = None

    async def signed(user_id: str, activity_id: int, month: date) -> frozenset[int]:
        return await signed_days(shards, user_id, activity_id, month)

    calendar: SignInCalendar = (
        DatabaseSignInCalendar(signed) if redis is None else RedisSignInCalendar(redis, signed)
    )
    if redis is None or commands is None:  # one process: counters in memory, sessions in SQL

        async def left(strategy_id: int) -> dict[int, int]:
            return await units_left(uow, shards, strategy_id)

        stock = MemoryPrizeStock(left)
        sessions = SqlSessionStore(config, clock)
        limiter = MemoryRateLimiter(clock)
        hints = MemoryChanceHints()
    else:
        # Stock claims and warm-ups get their own pool: they run while a draw's transaction
        # holds a connection, and sharing one pool would let busy draws starve them.
        engines.append(stock_engine := _engine(settings.database_url, settings))

        async def stocks(strategy_id: int) -> dict[int, int]:
            return await configured_stock(lambda: SqlUnitOfWork(stock_engine), strategy_id)

        claims = SqlStockClaims(stock_engine)
        stock = RedisPrizeStock(commands, claims, stocks, clock)
        sessions = RedisSessionStore(redis, clock, commands=commands)
        limiter = RedisRateLimiter(redis, commands=commands)
        hints = RedisChanceHints(commands)
    return Raffle(
        settings=settings,
        engines=engines,
        clock=clock,
        catalogue=Catalogue(uow, ttl=settings.catalogue_ttl_seconds),
        shards=shards,
        stock=stock,
        sessions=sessions,
        limiter=limiter,
        idempotency=SqlIdempotencyStore(config, clock),
        calendar=calendar,
        broker=_broker(settings),
        hints=hints,
        redis=redis,
        redis_commands=commands,
        closing=closing,
        claims=claims.counts if claims else None,
        ledger=claims,
    )


def sql_shards(engines: list[AsyncEngine], tables: int, draw_batch_size: int = 1) -> SqlShards:
    """The shards on `engines`, with their backend's unit of work and draw store: on
    PostgreSQL (asyncpg) draws in batches of up to `draw_batch_size`; on an SQLite file, the
    draw's statements on sqlite3; on MariaDB (asyncmy) draws in batches too, over the
    portable repositories; anything else, each draw alone."""
    if all(e.dialect.name == "postgresql" and e.dialect.driver == "asyncpg" for e in engines):
        batches = PgDrawBatches(engines, tables, draw_batch_size)
        return SqlShards(engines, tables, PgShardUnitOfWork, BatchedDraws(batches))
    if all(sqlite_file(e) for e in engines):
        return SqlShards(engines, tables, SqliteShardUnitOfWork)
    if all(
        e.dialect.name in ("mysql", "mariadb") and e.dialect.driver == "asyncmy" for e in engines
    ):
        mariadb = MariaDrawBatches(engines, tables, draw_batch_size)
        return SqlShards(engines, tables, draws=BatchedDraws(mariadb))
    return SqlShards(engines, tables)


def _engine(url: str, settings: Settings) -> AsyncEngine:
    return create_engine(url, pool_size=settings.pool_size, max_overflow=settings.pool_overflow)


def _broker(settings: Settings) -> Broker:
    attempts, timeout = settings.delivery_attempts, settings.publish_timeout_seconds
    if settings.broker_url is None:
        return MemoryBroker(attempts=attempts, timeout=timeout)
    return RabbitBroker(settings.broker_url, topics=[WON], attempts=attempts, timeout=timeout)


def _redis(settings: Settings) -> tuple[RedisClient | None, RedisCommands | None, Closing]:
    """The client and the shared round trips of the commands of every request (session,
    rate limit, stock, hints): on one Redis, or per master of a Redis Cluster; what else
    close() must close."""
    url = settings.redis_url
    if url is None:
        return None, None, []
    if not settings.redis_cluster:
        redis = _redis_client(url)
        return redis, SharedPipeline(redis), []
    cluster = RedisCluster.from_url(
        url,
        max_connections=200,  # per node; past it a command fails rather than waits
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.01), retries=3),
    )
    commands = ClusterCommands(cluster, lambda host, port: _redis_client(url, host, port))
    return cluster, commands, [commands.aclose]


def _redis_client(url: str, host: str | None = None, port: int | None = None) -> Redis:
    """A client whose callers wait for a free connection under load instead of failing,
    and that retries a command on a fresh connection after Redis restarted; to the URL's
    server, or with its credentials and options to a cluster's master at host:port."""
    options = parse_url(url)
    if host is not None and port is not None:
        options["host"], options["port"] = host, port
    pool = BlockingConnectionPool(
        **options,
        max_connections=200,
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.01), retries=3),
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
    )
    return Redis.from_pool(pool)
