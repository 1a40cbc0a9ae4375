"""Readiness on real servers: every database, Redis and the broker named with ok or down;
503 while Redis is stopped, live all along, and ready again once it is back, without a
restart of the service."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from raffle.bootstrap import bootstrap
from raffle.entrypoints.http.app import create_app
from raffle.settings import Settings
from tests.conftest import MakeDatabaseUrl
from tests.services import LOOPBACK, RedisServer, free_port


@pytest.fixture
async def settings(make_database_url: MakeDatabaseUrl, own_redis: RedisServer) -> Settings:
    config, shard = await make_database_url("postgres"), await make_database_url("postgres")
    return Settings(database_url=config, shard_urls=shard, redis_url=own_redis.url)


async def _client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    raffle = bootstrap(settings)
    transport = httpx.ASGITransport(app=create_app(raffle, scheduler=False))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://raffle.test") as client:
            yield client
    finally:
        await raffle.close()


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async for made in _client(settings):
        yield made


async def _ready(client: httpx.AsyncClient) -> tuple[int, dict[str, object]]:
    answer = await client.get("/api/health/ready")
    return answer.status_code, answer.json()


async def test_ready_follows_redis_down_and_back_while_live_stays(
    client: httpx.AsyncClient, own_redis: RedisServer
) -> None:
    up = {"database": "ok", "shard 1": "ok", "redis": "ok"}
    assert await _ready(client) == (200, {"status": "ready", "services": up})

    own_redis.stop()
    assert await _ready(client) == (503, {"status": "unready", "services": up | {"redis": "down"}})
    live = await client.get("/api/health/live")
    assert (live.status_code, live.json()) == (200, {"status": "ok"})
    assert (await client.get("/api/health")).json() == {"status": "ok"}

    own_redis.start()  # same port
    assert await _ready(client) == (200, {"status": "ready", "services": up})


async def test_a_stopped_broker_and_shard_are_named_down(settings: Settings) -> None:
    at = f"{LOOPBACK}:{free_port()}"  # nothing listens there: stopped servers
    stopped = settings.model_copy(
        update={
            "broker_url": f"amqp://guest:guest@{at}/",
            "shard_urls": f"postgresql+asyncpg://postgres@{at}/raffle",
        }
    )
    async for client in _client(stopped):
        status, body = await _ready(client)
        assert status == 503
        assert body["services"] == {
            "database": "ok",
            "shard 1": "down",
            "redis": "ok",
            "broker": "down",
        }
