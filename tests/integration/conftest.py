"""Fixtures of the integration tests: a migrated database with its shard tables, a Redis
client (one Redis, then a Redis Cluster) with its shared round trips and a key prefix of the
test's own, and whole raffles built on every backend."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.redis_commands import RedisClient, RedisCommands
from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.unit_of_work import create_engine
from raffle.bootstrap import Raffle, sql_shards
from raffle.domain.campaign import Campaign
from raffle.service.ports import Shards
from raffle.settings import Settings
from tests.alipay_world import NotifyUrl, Sim, new_key, notify_url, simulator
from tests.conftest import unavailable
from tests.integration.delivery_world import fresh_queues
from tests.integration.raffles import Build, SettableClock, wired
from tests.integration.redis_clients import REDIS_KINDS, connected, redis_settings
from tests.services import RedisServer, ServiceUnavailable

SHARD_TABLES = 4  # user rows spread over several tables of one database


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """The backend's database, migrated with SHARD_TABLES shard tables."""
    await upgrade(database_url, shard_tables=SHARD_TABLES)
    engine = create_engine(database_url)
    yield engine
    await engine.dispose()


@pytest.fixture
def shards(engine: AsyncEngine) -> Shards:
    return sql_shards([engine], SHARD_TABLES)


@pytest.fixture(params=REDIS_KINDS)
def redis_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def redis_connected(
    request: pytest.FixtureRequest, redis_kind: str
) -> AsyncIterator[tuple[RedisClient, RedisCommands]]:
    async with connected(request, redis_kind) as both:
        yield both


@pytest.fixture
def redis(redis_connected: tuple[RedisClient, RedisCommands]) -> RedisClient:
    """A client of one Redis, then of the cluster."""
    return redis_connected[0]


@pytest.fixture
def redis_commands(redis_connected: tuple[RedisClient, RedisCommands]) -> RedisCommands:
    """The shared round trips on `redis`, as bootstrap picks them for its deployment."""
    return redis_connected[1]


@pytest.fixture
def prefix() -> str:
    """Keys of this test only, whichever Redis the run uses."""
    return f"test:{uuid.uuid4().hex}:"


@pytest.fixture(params=["sqlite", "postgres+redis", "mariadb+redis", "postgres+redis-cluster"])
async def build(
    request: pytest.FixtureRequest,
    tmp_path: object,
    make_database_url: Callable[[str], Awaitable[str]],
) -> AsyncIterator[Build]:
    """Builds a raffle on the backend: SQLite alone (1 x 1), or two real databases
    (2 x 4 shards) with Redis for stock: one Redis, or a 3-master Redis Cluster; and, where a
    test asks for `+rabbitmq`, RabbitMQ for the messages instead of the in-process broker.
    `options` are further settings."""
    made: list[Raffle] = []
    backend, *servers = str(request.param).split("+")
    brokers = {"broker_url": await rabbitmq(request)} if "rabbitmq" in servers else {}

    async def build(loaded: Campaign, clock: SettableClock | None = None, **options: Any) -> Raffle:
        if backend == "sqlite":
            settings = Settings(
                database_url=f"sqlite:///{tmp_path}/raffle-{len(made)}.db", **options
            )
        else:
            first, second = await make_database_url(backend), await make_database_url(backend)
            settings = Settings(
                database_url=first,
                shard_urls=second,
                shard_tables=4,
                **await redis_settings(request, servers[0]),
                **{**brokers, **options},
            )
        raffle = await wired(settings, loaded, clock)
        made.append(raffle)
        return raffle

    yield build
    for raffle in made:
        await raffle.close()


async def rabbitmq(request: pytest.FixtureRequest) -> str:
    """The session's RabbitMQ, without the queues (and messages) of the tests before."""
    url = str(request.getfixturevalue("rabbitmq_url"))
    await fresh_queues(url)
    return url


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    """A Redis of the test's own, which it may stop, kill and start again (without
    persistence: a restart loses everything)."""
    try:
        server = RedisServer()
        server.start()
    except ServiceUnavailable as error:
        unavailable(str(error))
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def merchant() -> rsa.RSAPrivateKey:
    """The merchant's RSA key: the payment tests' Alipay app signs with it."""
    return new_key()


@pytest.fixture
def sim(tmp_path: Path, merchant: rsa.RSAPrivateKey) -> Iterator[Sim]:
    """The Alipay simulator, in a process of its own, knowing the merchant's key."""
    with simulator(tmp_path, merchant) as running:
        yield running


@pytest.fixture
async def sink() -> AsyncIterator[NotifyUrl]:
    """Where the simulator's notifications are posted: kept for the test to send on."""
    async with notify_url() as caught:
        yield caught
