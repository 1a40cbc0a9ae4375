"""The shared round trips on a Redis Cluster: one SharedPipeline per master, a command sent to
the master of its key's slot."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import (
    AskError,
    ClusterDownError,
    MovedError,
    NoScriptError,
    RedisClusterException,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from raffle.adapters.redis_pipeline import Arg, LuaScript, SharedPipeline

# What a master answers, or how it fails, when the cluster's map of slots changed under us
# (resharding, a failover) or the master is gone: the cluster client finds where to go.
_ELSEWHERE = (
    MovedError,
    AskError,
    ClusterDownError,
    TryAgainError,
    RedisClusterException,
    RedisConnectionError,
    RedisTimeoutError,
)

Connect = Callable[[str, int], Redis]  # a client of one master, by host and port


class ClusterCommands:
    """Each master gets the single-Redis round trips (SharedPipeline, on a plain client of
    its own that `connect` makes), so batches form per master and go to the masters in
    parallel. The master of a key is read from the cluster client's map of slots. A command
    that meets a moved slot, a cluster that is down or a master out of reach (after its
    client's retries) goes again, alone, through the cluster client, which follows the
    redirection, refreshes its map and retries as configured; the next commands then go to
    the new master's round trips. As on one Redis, a command applied before its connection
    broke may so be applied twice (module docstring of redis_pipeline).
    """

    def __init__(self, cluster: RedisCluster, connect: Connect) -> None:
        self.cluster = cluster
        self._connect = connect
        self._masters: dict[str, SharedPipeline] = {}

    @property
    def commands(self) -> int:
        return sum(master.commands for master in self._masters.values())

    @property
    def round_trips(self) -> int:
        return sum(master.round_trips for master in self._masters.values())

    async def execute(self, *command: Arg) -> Any:
        try:
            return await (await self._master(command[1])).execute(*command)
        except _ELSEWHERE:
            return await self._through_cluster(*command)

    async def run(self, script: LuaScript, keys: Sequence[str], args: Sequence[Arg]) -> Any:
        try:
            return await (await self._master(keys[0])).run(script, keys, args)
        except _ELSEWHERE:
            try:
                return await self._through_cluster("EVALSHA", script.sha, len(keys), *keys, *args)
            except NoScriptError:  # the script did not run: sending it whole is safe
                return await self._through_cluster("EVAL", script.body, len(keys), *keys, *args)

    async def aclose(self) -> None:
        """Close the masters' clients (not the cluster client, which its owner closes)."""
        await asyncio.gather(*(master.redis.aclose() for master in self._masters.values()))

    async def _through_cluster(self, *command: Arg) -> Any:
        """The command sent by the cluster client. A cluster it cannot reach at all is a
        RedisError as one Redis out of reach is, which callers know how to take."""
        try:
            return await self.cluster.execute_command(*command)
        except RedisClusterException as error:  # not a RedisError
            raise RedisConnectionError(f"Redis Cluster out of reach: {error}") from error

    async def _master(self, key: Arg) -> SharedPipeline:
        await self.cluster.initialize()  # reads the map of slots once; then returns at once
        # Typed str; bytes and numbers work as well: the slot is of the key encoded.
        node = self.cluster.get_node_from_key(key)  # type: ignore[arg-type]
        if node is None:  # only asked of replicas
            raise RedisClusterException(f"no master holds the slot of {key!r}")
        master = self._masters.get(node.name)
        if master is None:
            master = self._masters[node.name] = SharedPipeline(
                self._connect(node.host, int(node.port))
            )
        return master
