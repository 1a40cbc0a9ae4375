"""What the Redis adapters are given: a client (one Redis or a Redis Cluster) and the port of
the shared round trips, whose implementation bootstrap picks for the deployment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from raffle.adapters.redis_pipeline import Arg, LuaScript

# For the commands off the hot path; both clients route a one-key command alike.
RedisClient = Redis | RedisCluster


class RedisCommands(Protocol):
    """Commands of concurrent callers sent together (SharedPipeline on one Redis,
    ClusterCommands on a cluster). A command's first key follows its name; a script's keys
    share one hash tag, so one slot of a cluster."""

    @property
    def commands(self) -> int: ...  # sent, and round trips made: how well batches form

    @property
    def round_trips(self) -> int: ...

    async def execute(self, *command: Arg) -> Any: ...

    async def run(self, script: LuaScript, keys: Sequence[str], args: Sequence[Arg]) -> Any: ...
