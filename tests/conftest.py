"""Database and cache fixtures shared by every test suite.

``RAFFLE_TEST_POSTGRES_URL``, ``RAFFLE_TEST_MARIADB_URL``, ``RAFFLE_TEST_REDIS_URL`` and
``RAFFLE_TEST_REDIS_CLUSTER_URL`` (a node of a cluster) name existing servers; without them,
throwaway servers are started once per session from the local binaries (see ``services.py``;
the cluster: three masters). A test whose server is unavailable is skipped, or fails when
``RAFFLE_REQUIRE_SERVICES=1``.

A test that takes ``database_url`` runs once per backend (``[sqlite]``, ``[postgres]``,
``[mariadb]``), each time against a fresh, empty database: no marker needed.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import NoReturn, TypeVar

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from tests.services import (
    MariaDBServer,
    PostgresServer,
    RabbitMQServer,
    RedisClusterServer,
    RedisServer,
    Server,
    ServiceUnavailable,
)

pytest_plugins = ["tests.hang_watch"]  # a test that hangs dumps its tasks and fails

BACKENDS = ["sqlite", "postgres", "mariadb"]
ENV_URLS = {
    "postgres": "RAFFLE_TEST_POSTGRES_URL",
    "mariadb": "RAFFLE_TEST_MARIADB_URL",
    "redis": "RAFFLE_TEST_REDIS_URL",
    "redis-cluster": "RAFFLE_TEST_REDIS_CLUSTER_URL",  # a node of a cluster
    "rabbitmq": "RAFFLE_TEST_RABBITMQ_URL",
}
CREATE_DATABASE = {
    "postgres": "CREATE DATABASE {} TEMPLATE template0",
    "mariadb": "CREATE DATABASE {} CHARACTER SET utf8mb4",
}
DROP_DATABASE = {
    "postgres": "DROP DATABASE IF EXISTS {} WITH (FORCE)",  # even if a test leaked a connection
    "mariadb": "DROP DATABASE IF EXISTS {}",
}
MakeDatabaseUrl = Callable[[str], Awaitable[str]]
S = TypeVar("S", bound=Server | RedisClusterServer)

_startup_seconds: dict[str, float] = {}


def unavailable(reason: str) -> NoReturn:
    if os.environ.get("RAFFLE_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{reason} (RAFFLE_REQUIRE_SERVICES=1)", pytrace=False)
    pytest.skip(reason)


def _start(server_class: type[S]) -> S | str:
    """A started server, or why there is none."""
    try:
        server = server_class()
    except (ServiceUnavailable, OSError, subprocess.SubprocessError) as error:
        return str(error)
    try:
        server.start()
    except (ServiceUnavailable, OSError, subprocess.SubprocessError) as error:
        server.close()
        return str(error)
    return server


def _throwaway(server_class: type[S]) -> Iterator[S]:
    env = ENV_URLS[server_class.kind]
    if os.environ.get(env):
        unavailable(f"{env} is set: there is no throwaway {server_class.kind} to control")
    server = _start(server_class)
    if isinstance(server, str):
        unavailable(server)
    _startup_seconds[server.kind] = server.startup_seconds or 0.0
    try:
        yield server
    finally:
        server.close()


def _url(request: pytest.FixtureRequest, kind: str) -> str:
    if url := os.environ.get(ENV_URLS[kind]):
        return url
    server: Server | RedisClusterServer = request.getfixturevalue(
        f"{kind.replace('-', '_')}_server"
    )
    return server.url


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    yield from _throwaway(PostgresServer)


@pytest.fixture(scope="session")
def mariadb_server() -> Iterator[MariaDBServer]:
    yield from _throwaway(MariaDBServer)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    yield from _throwaway(RedisServer)


@pytest.fixture(scope="session")
def redis_cluster_server() -> Iterator[RedisClusterServer]:
    yield from _throwaway(RedisClusterServer)


@pytest.fixture(scope="session")
def rabbitmq_server() -> Iterator[RabbitMQServer]:
    yield from _throwaway(RabbitMQServer)


SYSTEM_RABBITMQ = "amqp://guest:guest@127.0.0.1:5672/"


@pytest.fixture(scope="session")
def rabbitmq_url(request: pytest.FixtureRequest) -> str:
    """A throwaway node; the system's broker on 5672 only if none can be started (tests that
    kill or restart the broker then still need a throwaway one, and say so)."""
    try:
        return _url(request, "rabbitmq")
    except (pytest.skip.Exception, pytest.fail.Exception):
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", 5672), 1):
            print(f"no throwaway RabbitMQ: using the system broker {SYSTEM_RABBITMQ}")
            return SYSTEM_RABBITMQ
        raise


@pytest.fixture(scope="session")
def postgres_url(request: pytest.FixtureRequest) -> str:
    return _url(request, "postgres")


@pytest.fixture(scope="session")
def mariadb_url(request: pytest.FixtureRequest) -> str:
    return _url(request, "mariadb")


@pytest.fixture(scope="session")
def redis_url(request: pytest.FixtureRequest) -> str:
    return _url(request, "redis")


@pytest.fixture(scope="session")
def redis_cluster_url(request: pytest.FixtureRequest) -> str:
    return _url(request, "redis-cluster")


async def _execute_autocommit(url: str, statement: str) -> None:
    engine = create_async_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            await connection.execute(text(statement))
    finally:
        await engine.dispose()


@pytest.fixture
async def make_database_url(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[MakeDatabaseUrl]:
    """``await make_database_url(backend)``: the URL of a new, empty database, dropped after."""
    created: list[tuple[str, str, str]] = []  # (backend, server URL, database name)

    async def make(backend: str) -> str:
        name = f"raffle_{uuid.uuid4().hex[:16]}"
        if backend == "sqlite":
            return f"sqlite+aiosqlite:///{tmp_path / name}.db"
        if backend not in CREATE_DATABASE:
            raise ValueError(f"unknown backend {backend!r}, expected one of {BACKENDS}")
        server_url = _url(request, backend)
        await _execute_autocommit(server_url, CREATE_DATABASE[backend].format(name))
        created.append((backend, server_url, name))
        return make_url(server_url).set(database=name).render_as_string(hide_password=False)

    yield make
    for backend, server_url, name in reversed(created):
        await _execute_autocommit(server_url, DROP_DATABASE[backend].format(name))


@pytest.fixture(params=BACKENDS)
async def database_url(
    request: pytest.FixtureRequest, tmp_path: Path, make_database_url: MakeDatabaseUrl
) -> str:
    """A fresh, empty database on each backend in turn: SQLite, PostgreSQL, MariaDB."""
    backend: str = request.param
    if backend == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'raffle.db'}"
    return await make_database_url(backend)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _startup_seconds:
        times = ", ".join(f"{kind} {seconds:.2f}s" for kind, seconds in _startup_seconds.items())
        terminalreporter.write_line(f"throwaway servers started in: {times}")
