"""Fixtures of the integration tests: a migrated database with its shard tables, a Redis
client and a key prefix of the test's own, and whole raffles built on every backend."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from redis.asyncio import BlockingConnectionPool, Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.unit_of_work import create_engine
from raffle.bootstrap import Raffle, sql_shards
from raffle.domain.campaign import Campaign
from raffle.service.ports import Shards
from raffle.settings import Settings
from tests.integration.raffles import Build, SettableClock, wired

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


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    # Requests wait for a free connection: the default pool raises past 100 in use.
    client = Redis.from_pool(BlockingConnectionPool.from_url(redis_url, max_connections=50))
    yield client
    await client.aclose()


@pytest.fixture
def prefix() -> str:
    """Keys of this test only, whichever Redis the run uses."""
    return f"test:{uuid.uuid4().hex}:"


@pytest.fixture(params=["sqlite", "postgres+redis", "mariadb+redis"])
async def build(
    request: pytest.FixtureRequest,
    tmp_path: object,
    make_database_url: Callable[[str], Awaitable[str]],
    redis_url: str,
) -> AsyncIterator[Build]:
    """Builds a raffle on the backend: SQLite alone (1 x 1), or two real databases
    (2 x 4 shards) with Redis for stock."""
    made: list[Raffle] = []

    async def build(loaded: Campaign, clock: SettableClock | None = None) -> Raffle:
        if request.param == "sqlite":
            settings = Settings(database_url=f"sqlite:///{tmp_path}/raffle-{len(made)}.db")
        else:
            backend = request.param.split("+")[0]
            first, second = await make_database_url(backend), await make_database_url(backend)
            client = Redis.from_url(redis_url)
            await client.flushdb()
            await client.aclose()
            settings = Settings(
                database_url=first, shard_urls=second, shard_tables=4, redis_url=redis_url
            )
        raffle = await wired(settings, loaded, clock)
        made.append(raffle)
        return raffle

    yield build
    for raffle in made:
        await raffle.close()
