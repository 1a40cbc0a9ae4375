"""The server fixtures themselves: fresh databases on every backend, Redis, and fault control."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from sqlalchemy import Connection, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from tests.services import RedisServer

DIALECTS = {"sqlite": "sqlite", "postgres": "postgresql", "mariadb": "mysql"}
MakeDatabaseUrl = Callable[[str], Awaitable[str]]  # the conftest fixture ``make_database_url``


def _table_names(connection: Connection) -> list[str]:
    return inspect(connection).get_table_names()


async def _tables_after(url: str, *statements: str) -> list[str]:
    """Run ``statements`` in one transaction on ``url``, then list its tables."""
    engine = create_async_engine(url, poolclass=NullPool)
    try:
        async with engine.begin() as connection:
            assert (await connection.execute(text("SELECT 1"))).scalar_one() == 1
            for statement in statements:
                await connection.execute(text(statement))
            return sorted(await connection.run_sync(_table_names))
    finally:
        await engine.dispose()


def _backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.node.callspec.params["database_url"]
    return backend


async def test_database_url_is_a_connectable_empty_database(
    request: pytest.FixtureRequest, database_url: str
) -> None:
    backend = _backend(request)
    url = make_url(database_url)
    assert url.get_backend_name() == DIALECTS[backend]
    if backend != "sqlite":
        assert url.database is not None
        assert url.database.startswith("raffle_")  # its own database, not the shared one
    assert await _tables_after(database_url) == []


async def test_databases_are_isolated(
    request: pytest.FixtureRequest, database_url: str, make_database_url: MakeDatabaseUrl
) -> None:
    other_url = await make_database_url(_backend(request))
    assert other_url != database_url
    create = "CREATE TABLE marker (id INTEGER PRIMARY KEY)"
    assert await _tables_after(database_url, create) == ["marker"]
    assert await _tables_after(other_url) == []
    assert await _tables_after(other_url, create) == ["marker"]  # no clash either
    assert await _tables_after(database_url) == ["marker"]


async def test_redis_set_get_round_trip(redis_url: str) -> None:
    key, value = f"raffle-test:{uuid.uuid4().hex}", "新年大转盘"
    client = Redis.from_url(redis_url, decode_responses=True)
    try:
        assert await client.set(key, value, ex=60)
        assert await client.get(key) == value
        assert await client.delete(key) == 1
        assert await client.get(key) is None
    finally:
        await client.aclose()


async def test_redis_kill_and_restart_loses_unpersisted_data(redis_server: RedisServer) -> None:
    key = f"raffle-test:{uuid.uuid4().hex}"
    client = Redis.from_url(redis_server.url, decode_responses=True)
    try:
        await client.set(key, "before the crash")
        assert await client.get(key) == "before the crash"
        old_pid = redis_server.pid
        redis_server.kill()
        assert not redis_server.running
        with pytest.raises(RedisConnectionError):
            await client.ping()
        redis_server.restart()
        assert redis_server.running
        assert redis_server.pid != old_pid
        assert await client.ping() is True  # same URL; the client reconnects
        assert await client.get(key) is None  # no persistence: the key died with the server
    finally:
        await client.aclose()
