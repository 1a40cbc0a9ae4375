"""Redis clients for the tests, on one Redis or on a Redis Cluster, wired as bootstrap wires
them."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from raffle.adapters.redis_cluster import ClusterCommands
from raffle.adapters.redis_commands import RedisClient, RedisCommands
from raffle.adapters.redis_pipeline import SharedPipeline

REDIS_KINDS = ["redis", "redis-cluster"]


def redis_client(kind: str, url: str, max_connections: int = 50, **options: Any) -> RedisClient:
    """A client of one Redis whose callers wait for a free connection (the default pool
    raises past 100 in use), or of a cluster (that raises past `max_connections` a node)."""
    if kind == "redis-cluster":
        return RedisCluster.from_url(url, max_connections=max(max_connections, 250), **options)
    pool = BlockingConnectionPool.from_url(url, max_connections=max_connections, **options)
    return Redis.from_pool(pool)


def master(host: str, port: int) -> SharedPipeline:
    """The round trips to a cluster's master, on a client retrying as bootstrap's do (and,
    as theirs, without a socket timeout: the round trip has its own)."""
    retry = Retry(ExponentialBackoff(cap=0.5, base=0.01), retries=3)
    errors: list[type[Exception]] = [RedisConnectionError, RedisTimeoutError]
    client = Redis(host=host, port=port, retry=retry, retry_on_error=errors, socket_timeout=None)
    return SharedPipeline(client)


def commands_of(client: RedisClient) -> RedisCommands:
    """The shared round trips on `client`, as bootstrap picks them for its deployment."""
    if isinstance(client, RedisCluster):
        return ClusterCommands(client, master)
    return SharedPipeline(client)


@contextlib.asynccontextmanager
async def connected(
    request: pytest.FixtureRequest, kind: str, url: str | None = None, **options: Any
) -> AsyncIterator[tuple[RedisClient, RedisCommands]]:
    """A client of the session's Redis of `kind` (or of `url`) and the shared round trips
    on it; `options` for the client."""
    url = url or str(request.getfixturevalue(f"{kind.replace('-', '_')}_url"))
    client = redis_client(kind, url, **options)
    commands = commands_of(client)
    try:
        yield client, commands
    finally:
        if isinstance(commands, ClusterCommands):
            await commands.aclose()
        await client.aclose()


async def redis_settings(request: pytest.FixtureRequest, kind: str) -> dict[str, Any]:
    """The settings of a raffle on one Redis or on the cluster, emptied first."""
    url = str(request.getfixturevalue(f"{kind.replace('-', '_')}_url"))
    client = redis_client(kind, url)
    await client.flushdb()
    await client.aclose()
    return {"redis_url": url, "redis_cluster": kind == "redis-cluster"}


def all_nodes(redis: RedisClient) -> dict[str, object]:
    """The keyword that sends a server command to every node of a cluster (none for one Redis)."""
    return {"target_nodes": RedisCluster.ALL_NODES} if isinstance(redis, RedisCluster) else {}


def total(answer: object) -> int:
    """A count a server command answered: summed over a cluster's nodes."""
    if isinstance(answer, dict):
        return sum(int(n) for n in answer.values())
    return int(str(answer))
