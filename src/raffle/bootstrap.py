"""The composition root: the only place that wires adapters to the service layer."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import partial
from typing import Any

import httpx
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import parse_url
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.alipay.gateway import AlipayGateway, Merchant
from raffle.adapters.alipay.signing import private_key, public_key
from raffle.adapters.broker.memory import MemoryBroker
from raffle.adapters.broker.rabbit import RabbitBroker
from raffle.adapters.chance_hints import MemoryChanceHints, RedisChanceHints
from raffle.adapters.clock import SystemClock
from raffle.adapters.flash_stock import MemorySaleStock, RedisSaleStock
from raffle.adapters.id_news import RedisIdNews
from raffle.adapters.metrics import PrometheusMetrics
from raffle.adapters.notice_channel import LogChannel, NoticeChannel, NoticeRoute, WebhookChannel
from raffle.adapters.passwords import PasswordHasher
from raffle.adapters.phones import PhoneBook
from raffle.adapters.prize_stock import MemoryPrizeStock, RedisPrizeStock
from raffle.adapters.probes import Probe, ping, sql
from raffle.adapters.profile_news import PROFILE_NEWS, PolledProfileNews
from raffle.adapters.qr_codes import MemoryQrCodes, RedisQrCodes
from raffle.adapters.randomness import SecretsRandomSource, SystemRandomSource
from raffle.adapters.rate_limits import MemoryRateLimiter, RedisRateLimiter
from raffle.adapters.redis_cluster import ClusterCommands
from raffle.adapters.redis_commands import RedisClient, RedisCommands
from raffle.adapters.redis_pipeline import ROUND_TRIP_SECONDS, SharedPipeline
from raffle.adapters.redis_sessions import SESSION_NEWS, RedisSessionStore
from raffle.adapters.sessions import SqlSessionStore
from raffle.adapters.sign_in_calendar import DatabaseSignInCalendar, RedisSignInCalendar
from raffle.adapters.sql.connection import sqlite_file
from raffle.adapters.sql.mariadb.draw_batch import MariaDrawBatches
from raffle.adapters.sql.postgres.draw_batch import PgDrawBatches
from raffle.adapters.sql.postgres.shards import PgShardUnitOfWork
from raffle.adapters.sql.repositories.deny import SqlDenyStore
from raffle.adapters.sql.repositories.flash_sales import SqlFlashSales
from raffle.adapters.sql.repositories.idempotency import SqlIdempotencyStore
from raffle.adapters.sql.repositories.switches import SqlSwitchStore
from raffle.adapters.sql.repositories.tags import SqlTagStore
from raffle.adapters.sql.repositories.user_pages import SqlUserPages
from raffle.adapters.sql.shards import SqlShards
from raffle.adapters.sql.sqlite.draw import SqliteDrawBatches
from raffle.adapters.sql.stock_claims import CAPS, SqlStockClaims
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.adapters.switch_news import (
    DENY_NEWS,
    FLASH_NEWS,
    TAG_NEWS,
    PolledSwitchNews,
    RedisSwitchNews,
)
from raffle.adapters.tag_language import RuleEngineLanguage
from raffle.domain.delivery import WON
from raffle.domain.flash_gate import FlashGate
from raffle.domain.flash_sales import PAID, PURCHASED
from raffle.domain.payments import NOTIFIED
from raffle.domain.profiles import Profile
from raffle.domain.randomness import RandomSource
from raffle.domain.switches import LIMITS, Switches
from raffle.domain.tickets import QUEUED
from raffle.service import flash_payments
from raffle.service.audience import TagBoard
from raffle.service.blocking import Blocking
from raffle.service.cap_counts import cap_limits, room_left
from raffle.service.catalogue import Catalogue
from raffle.service.deliverers import DeliveryContext
from raffle.service.delivery import Fault, no_fault
from raffle.service.deny_board import DenyBoard
from raffle.service.draw import draw
from raffle.service.draw_batch import BatchedDraws
from raffle.service.draw_checks import DrawChecks
from raffle.service.fairness import SeedBook
from raffle.service.flash_sales import FlashLimits, FlashSales
from raffle.service.join_code_gate import JoinCodeGate
from raffle.service.payments import Payments, PaymentsOff
from raffle.service.ports import (
    Broker,
    ChanceHints,
    Clock,
    IdempotencyStore,
    IdNews,
    PrizeStock,
    RateLimiter,
    SessionStore,
    Shards,
    SignInCalendar,
    UnitOfWork,
)
from raffle.service.ports.payment_orders import QrCodes
from raffle.service.ports.payments import PaymentGateway
from raffle.service.ports.tags import ProfilePages
from raffle.service.profile_cache import CachedProfiles
from raffle.service.profiles import ProfileCare
from raffle.service.queued_drawing import TicketDrawer
from raffle.service.queued_draws import Queue
from raffle.service.rebates import signed_days
from raffle.service.reconcile import ClaimCounts
from raffle.service.stock import configured_stock, units_left
from raffle.service.stock_sync import ClaimLedger
from raffle.service.switchboard import SwitchBoard
from raffle.service.winners_feed import FeedCache
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
    switches: SwitchBoard  # operators' runtime switches, as this process sees them
    tags: TagBoard  # the Audience: tags as this process holds them (`tags.watch()`)
    profile_pages: ProfilePages  # what a tag's preview scans
    profiles: CachedProfiles  # the Profiles port: `profiles.watch()` keeps it fresh
    phones: PhoneBook
    deny: DenyBoard  # the deny lists and blocking rules as this process holds them
    blocking: Blocking  # counts refused draws and failed logins for the blocking rules
    caps: PrizeStock | None = None  # activities' cap counters (winners, participants)
    claims: ClaimCounts | None = None  # stock claims per prize, where a cache can lose data
    cap_ledger: ClaimLedger | None = None  # the activities' cap claims, likewise
    ledger: ClaimLedger | None = None  # the claims themselves, for the stock-sync job
    hasher: PasswordHasher = field(default_factory=PasswordHasher)
    rng: RandomSource = field(default_factory=SystemRandomSource)
    redis: RedisClient | None = None
    redis_commands: RedisCommands | None = None  # the hot commands' shared round trips
    closing: Closing = field(default_factory=list)  # closed by close(), before redis
    probes: list[Probe] = field(default_factory=list)  # each service it depends on
    metrics: PrometheusMetrics = field(default_factory=PrometheusMetrics)  # at /metrics
    gateway: PaymentGateway | None = None  # Alipay (or its simulator), with an app id set
    code_rng: RandomSource = field(default_factory=SecretsRandomSource)  # join codes'
    join_codes: JoinCodeGate = field(init=False)  # who holds a join code, per process
    feed: FeedCache = field(default_factory=FeedCache)  # winners' feeds' first pages
    qr_codes: QrCodes | None = None  # orders' QR content: Redis, else this process's memory
    draw_checks: DrawChecks = field(init=False)  # what refuses a draw before its transaction
    seeds: SeedBook = field(init=False)  # the committed seeds draws take, per process
    flash: FlashSales = field(init=False)  # flash sales: the gate, the fast stock, the queue

    def __post_init__(self) -> None:
        self.join_codes = JoinCodeGate(self.uow)
        self.draw_checks = DrawChecks(
            self.deny, self.profiles, self.switches, self.limiter, self.join_codes
        )
        self.seeds = SeedBook(self.uow, ttl=min(self.settings.catalogue_ttl_seconds, 1.0))
        self.flash = _flash(self, SqlFlashSales(self.engines[0]))
        if self.gateway is not None and self.qr_codes is not None:
            self.flash.unpaid = partial(flash_payments.unpaid, ctx=self.payments())

    def uow(self) -> UnitOfWork:
        return SqlUnitOfWork(self.engines[0])

    def profile_care(self) -> ProfileCare:
        return ProfileCare(self.uow, self.phones, self.profiles, self.clock)

    def delivery(self) -> DeliveryContext:
        return DeliveryContext(
            self.catalogue, self.uow, self.shards, self.clock, self.hints, self.metrics
        )

    def payments(self, fault: Fault = no_fault) -> Payments:
        """What the payment use cases need; PaymentsOff without a gateway."""
        if self.gateway is None or self.qr_codes is None:
            raise PaymentsOff("payments are off: no payment gateway is configured")
        return Payments(self.uow, self.shards, self.gateway, self.qr_codes, self.clock, fault)

    def queue(self) -> Queue:
        return Queue(self.settings.queue_bound, self.settings.queue_retry_seconds)

    def ticket_drawer(self) -> TicketDrawer:
        """The queued draws' consumer: each ticket through the draw use case. The player's
        checks ran when the ticket was accepted (with the request's address), and are not
        run again."""
        one = partial(
            draw, catalogue=self.catalogue, shards=self.shards, stock=self.stock, rng=self.rng,
            clock=self.clock, hints=self.hints, metrics=self.metrics, profiles=self.profiles,
            audience=self.tags, caps=self.caps, seeds=self.seeds,
        )  # fmt: skip
        return TicketDrawer(self.uow, one, self.settings.queue_batch)

    def pools(self) -> dict[str, AsyncEngine]:
        """The engines by their pool's name in metrics: db0 the configuration database, db1…
        the other shard databases, stock the claims' own pool."""
        databases = len(self.settings.database_urls)
        return {f"db{i}" if i < databases else "stock": e for i, e in enumerate(self.engines)}

    async def start(self) -> None:
        """Connect and check the databases answer, so a bad URL fails at start-up; read the
        switches and the tags (`switches.watch()`, `tags.watch()` keep them fresh)."""
        for engine in self.engines:
            async with engine.connect():
                pass
        await self.switches.refresh()
        await self.tags.refresh()
        await self.deny.refresh()

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
    news = PolledSwitchNews() if redis is None else RedisSwitchNews(redis)
    switches = SwitchBoard(SqlSwitchStore(config), news, {n: getattr(settings, n) for n in LIMITS})
    catalogue = Catalogue(
        uow,
        ttl=settings.catalogue_ttl_seconds,
        rules_off=lambda strategy_id: switches.current.rules_off.get(strategy_id, frozenset()),
    )
    switches.listen(partial(_apply_switches, catalogue, shards))
    tag_news = PolledSwitchNews() if redis is None else RedisSwitchNews(redis, channel=TAG_NEWS)
    tags = TagBoard(SqlTagStore(config), tag_news, RuleEngineLanguage())
    profiles = _profiles(uow, redis, settings)
    deny_news = PolledSwitchNews() if redis is None else RedisSwitchNews(redis, channel=DENY_NEWS)
    deny = DenyBoard(SqlDenyStore(config), deny_news, clock)
    claims: SqlStockClaims | None = None
    cap_claims: SqlStockClaims | None = None
    caps: PrizeStock

    async def signed(user_id: str, activity_id: int, month: date) -> frozenset[int]:
        return await signed_days(shards, user_id, activity_id, month)

    calendar: SignInCalendar = (
        DatabaseSignInCalendar(signed) if redis is None else RedisSignInCalendar(redis, signed)
    )
    if redis is None or commands is None:  # one process: counters in memory, sessions in SQL

        async def left(strategy_id: int) -> dict[int, int]:
            return await units_left(uow, shards, strategy_id)

        async def room(activity_id: int) -> dict[int, int]:
            return await room_left(uow, shards, activity_id)

        stock = MemoryPrizeStock(left)
        caps = MemoryPrizeStock(room)
        sessions = SqlSessionStore(config, clock)
        limiter = MemoryRateLimiter(clock)
        hints = MemoryChanceHints()
    else:
        # Stock claims and warm-ups get their own pool: they run while a draw's transaction
        # holds a connection, and sharing one pool would let busy draws starve them.
        engines.append(stock_engine := _engine(settings.database_url, settings))

        async def stocks(strategy_id: int) -> dict[int, int]:
            return await configured_stock(lambda: SqlUnitOfWork(stock_engine), strategy_id)

        async def limits(activity_id: int) -> dict[int, int]:
            return await cap_limits(lambda: SqlUnitOfWork(stock_engine), activity_id)

        claims = SqlStockClaims(stock_engine)
        stock = RedisPrizeStock(commands, claims, stocks, clock)
        cap_claims = SqlStockClaims(stock_engine, CAPS)
        caps = RedisPrizeStock(commands, cap_claims, limits, clock, name="caps")
        sessions = RedisSessionStore(
            redis, clock, commands=commands, news=RedisIdNews(redis, channel=SESSION_NEWS),
            keep=settings.session_keep_seconds,
        )  # fmt: skip
        limiter = RedisRateLimiter(redis, commands=commands)
        hints = RedisChanceHints(commands)
    broker = _broker(settings)
    gateway = _gateway(settings, clock, closing)
    probes = _probes(settings, databases, redis, broker)
    broker = NoticeRoute(broker, _notice_channel(settings, clock))
    return Raffle(
        deny=deny,
        blocking=Blocking(deny, limiter),
        settings=settings,
        engines=engines,
        clock=clock,
        catalogue=catalogue,
        shards=shards,
        stock=stock,
        sessions=sessions,
        limiter=limiter,
        idempotency=SqlIdempotencyStore(config, clock),
        calendar=calendar,
        broker=broker,
        hints=hints,
        switches=switches,
        tags=tags,
        profile_pages=SqlUserPages(config),
        profiles=profiles,
        phones=PhoneBook(settings.phone_region),
        redis=redis,
        redis_commands=commands,
        closing=closing,
        caps=caps,
        claims=claims.counts if claims else None,
        cap_ledger=cap_claims,
        ledger=claims,
        probes=probes,
        metrics=PrometheusMetrics(),
        gateway=gateway,
        qr_codes=MemoryQrCodes(clock) if redis is None else RedisQrCodes(redis),
    )


def sql_shards(engines: list[AsyncEngine], tables: int, draw_batch_size: int = 1) -> SqlShards:
    """The shards on `engines`, with their backend's unit of work and draw store: on
    PostgreSQL (asyncpg), MariaDB (asyncmy) and an SQLite file, draws in batches of up to
    `draw_batch_size` on each one's own statements; anything else, each draw alone."""
    if all(e.dialect.name == "postgresql" and e.dialect.driver == "asyncpg" for e in engines):
        batches = PgDrawBatches(engines, tables, draw_batch_size)
        return SqlShards(engines, tables, PgShardUnitOfWork, BatchedDraws(batches))
    if all(sqlite_file(e) for e in engines):
        sqlite = SqliteDrawBatches(engines, tables, draw_batch_size)
        return SqlShards(engines, tables, draws=BatchedDraws(sqlite))
    if all(
        e.dialect.name in ("mysql", "mariadb") and e.dialect.driver == "asyncmy" for e in engines
    ):
        mariadb = MariaDrawBatches(engines, tables, draw_batch_size)
        return SqlShards(engines, tables, draws=BatchedDraws(mariadb))
    return SqlShards(engines, tables)


def _profiles(
    uow: Callable[[], UnitOfWork], redis: RedisClient | None, settings: Settings
) -> CachedProfiles:
    """Profiles kept per process for `profile_ttl_seconds`, forgotten at once by the process
    that changed them, and by the others on news: Redis pub/sub, or (no Redis) the stored
    version they poll."""

    async def read(user_id: str) -> Profile | None:
        async with uow() as reader:
            return await reader.profiles.get(user_id)

    async def version() -> int:
        async with uow() as reader:
            return await reader.profiles.version()

    news: IdNews = (
        PolledProfileNews(version) if redis is None else RedisIdNews(redis, channel=PROFILE_NEWS)
    )
    return CachedProfiles(read, news, ttl=settings.profile_ttl_seconds)


def _apply_switches(catalogue: Catalogue, shards: Shards, before: Switches, now: Switches) -> None:
    """What keeps its own copy of a switch: the engines, made without switched-off rules;
    the draw store's batch size."""
    if now.rules_off != before.rules_off:
        catalogue.forget()
    if (size := now.limits["draw_batch_size"]) != before.limits["draw_batch_size"]:
        shards.draws.resize(size)


def _engine(url: str, settings: Settings) -> AsyncEngine:
    return create_engine(url, pool_size=settings.pool_size, max_overflow=settings.pool_overflow)


def _probes(
    settings: Settings, databases: list[AsyncEngine], redis: RedisClient | None, broker: Broker
) -> list[Probe]:
    """A probe per service, named after the setting that points at it."""
    config, *shards = zip(settings.database_urls, databases, strict=True)
    found = [Probe("database", "the database", "RAFFLE_DATABASE_URL", config[0], sql(config[1]))]
    for number, (url, engine) in enumerate(shards, 1):
        service = f"shard database {number}"
        found.append(Probe(f"shard {number}", service, "RAFFLE_SHARD_URLS", url, sql(engine)))
    if redis is not None and settings.redis_url is not None:
        found.append(Probe("redis", "Redis", "RAFFLE_REDIS_URL", settings.redis_url, ping(redis)))
    if isinstance(broker, RabbitBroker) and settings.broker_url is not None:
        url = settings.broker_url
        found.append(Probe("broker", "the broker", "RAFFLE_BROKER_URL", url, broker.ready))
    return found


def _flash(raffle: Raffle, store: SqlFlashSales) -> FlashSales:
    """Flash sales on Redis (a script per step, news of returned units on pub/sub), or in
    this process's memory."""
    settings, redis, commands = raffle.settings, raffle.redis, raffle.redis_commands
    secret = settings.flash_secret
    gate = FlashGate(
        secret=secrets.token_bytes(32) if secret is None else secret.get_secret_value().encode(),
        difficulty=settings.flash_difficulty,
        challenge_seconds=settings.flash_challenge_seconds,
        path_seconds=settings.flash_path_seconds,
    )
    limits = FlashLimits(
        paths_per_minute=settings.flash_paths_per_minute,
        purchases_per_second=settings.flash_purchases_per_second,
        address_per_second=settings.flash_address_per_second,
        queue_bound=settings.flash_queue_bound,
        payment_window=timedelta(minutes=settings.flash_payment_minutes),
        settle=timedelta(seconds=settings.flash_settle_seconds),
        stray=timedelta(seconds=settings.flash_stray_seconds),
    )
    return FlashSales(
        store=store,
        stock=MemorySaleStock() if commands is None else RedisSaleStock(commands),
        broker=raffle.broker,
        news=PolledSwitchNews() if redis is None else RedisSwitchNews(redis, channel=FLASH_NEWS),
        gate=gate,
        clock=raffle.clock,
        limiter=raffle.limiter,
        deny=raffle.deny,
        profiles=raffle.profiles,
        limits=limits,
        shards=raffle.shards,
    )


def _broker(settings: Settings) -> Broker:
    attempts, timeout = settings.delivery_attempts, settings.publish_timeout_seconds
    if settings.broker_url is None:
        return MemoryBroker(attempts=attempts, timeout=timeout)
    return RabbitBroker(
        settings.broker_url,
        topics=[WON, NOTIFIED, QUEUED, PURCHASED, PAID],
        attempts=attempts,
        timeout=timeout,
        in_order=[QUEUED],
        bounds={PURCHASED: settings.flash_queue_bound},
    )


def _gateway(settings: Settings, clock: Clock, closing: Closing) -> PaymentGateway | None:
    """Alipay's open API at the configured URL, when an app id is set; its HTTP client is
    closed with the rest."""
    if settings.alipay_app_id is None or settings.alipay_seller_id is None:
        return None
    private, public = settings.alipay_keys
    merchant = Merchant(
        app_id=settings.alipay_app_id,
        seller_id=settings.alipay_seller_id,
        private_key=private_key(private),
        alipay_public_key=public_key(public),
        notify_url=settings.alipay_notify_url,
    )
    client = httpx.AsyncClient(timeout=settings.alipay_timeout_seconds)
    closing.append(client.aclose)
    return AlipayGateway(merchant, settings.alipay_gateway_url, client, clock)


def _notice_channel(settings: Settings, clock: Clock) -> NoticeChannel:
    """Operators' notices: to the webhook when one is configured, else to the log."""
    url, secret = settings.notice_webhook_url, settings.notice_webhook_secret
    if url is None or secret is None:
        return LogChannel()
    timeout = settings.publish_timeout_seconds
    return WebhookChannel(url, secret.get_secret_value(), clock, timeout=timeout)


def _redis(settings: Settings) -> tuple[RedisClient | None, RedisCommands | None, Closing]:
    """The client and the shared round trips of the commands of every request (session,
    rate limit, stock, hints): on one Redis, or per master of a Redis Cluster; what else
    close() must close."""
    url = settings.redis_url
    if url is None:
        return None, None, []
    if not settings.redis_cluster:
        redis = _redis_client(url)
        pipeline = _pipeline(url)
        return redis, pipeline, [pipeline.aclose, pipeline.redis.aclose]
    cluster = RedisCluster.from_url(
        url,
        max_connections=200,  # per node; past it a command fails rather than waits
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.01), retries=3),
    )
    commands = ClusterCommands(cluster, lambda host, port: _pipeline(url, host, port))
    return cluster, commands, [commands.aclose]


def _pipeline(url: str, host: str | None = None, port: int | None = None) -> SharedPipeline:
    """The shared round trips to the URL's Redis (or a cluster's master at host:port), on a
    client of their own whose connections have no socket timeout: the round trip's own
    timer, the URL's socket_timeout if it gives one, covers its write and its replies."""
    options: dict[str, Any] = {**parse_url(url)}
    timeout = float(options.get("socket_timeout") or ROUND_TRIP_SECONDS)
    return SharedPipeline(_redis_client(url, host, port, socket_timeout=None), timeout)


def _redis_client(
    url: str, host: str | None = None, port: int | None = None, **settings: Any
) -> Redis:
    """A client whose callers wait for a free connection under load instead of failing,
    and that retries a command on a fresh connection after Redis restarted; to the URL's
    server, or with its credentials and options to a cluster's master at host:port;
    `settings` over the URL's options."""
    options: dict[str, Any] = {**parse_url(url), **settings}
    if host is not None and port is not None:
        options["host"], options["port"] = host, port
    pool = BlockingConnectionPool(
        **options,
        max_connections=200,
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.01), retries=3),
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
    )
    return Redis.from_pool(pool)
