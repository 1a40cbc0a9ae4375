"""The shared round trips on a Redis Cluster: one SharedPipeline per master, a command sent to
the master of its key's slot."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

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
_ELSEWHERE = (MovedError, AskError, RedisClusterException, RedisConnectionError, RedisTimeoutError)
# A cluster that is not serving the slot yet (masters back from a restart agreeing again, a
# failover's election, a slot mid-migration) or out of reach even to the cluster client is
# asked again after these pauses, and its error is the caller's after the last, as one
# Redis's is after its client's retries.
_DOWN = (ClusterDownError, TryAgainError, RedisConnectionError)
DOWN_PAUSES = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)

Connect = Callable[[str, int], SharedPipeline]  # one master's round trips, by host and port


class ClusterCommands:
    """Each master gets the single-Redis round trips (a SharedPipeline, on a plain client of
    its own, that `connect` makes), so batches form per master and go to the masters in
    parallel. The master of a key is read from the cluster client's map of slots. A command
    that meets a moved slot or a master out of reach (after its client's retries) goes
    again, alone, through the cluster client, which follows the redirection, refreshes its
    map and retries as configured; the next commands then go to the new master's round
    trips. As on one Redis, a command applied before its connection
    broke may so be applied twice (module docstring of redis_pipeline).
    """

    def __init__(self, cluster: RedisCluster, connect: Connect) -> None:
        self.cluster = cluster
        self._connect = connect
        self._masters: dict[str, SharedPipeline] = {}
        self._rerouting = asyncio.Lock()

    @property
    def commands(self) -> int:
        return sum(master.commands for master in self._masters.values())

    @property
    def round_trips(self) -> int:
        return sum(master.round_trips for master in self._masters.values())

    async def execute(self, *command: Arg) -> Any:
        async def through_cluster() -> Any:
            return await self._through_cluster(*command)

        return await self._send(
            command[1], lambda master: master.execute(*command), through_cluster
        )

    async def run(self, script: LuaScript, keys: Sequence[str], args: Sequence[Arg]) -> Any:
        async def through_cluster() -> Any:
            try:
                return await self._through_cluster("EVALSHA", script.sha, len(keys), *keys, *args)
            except NoScriptError:  # the script did not run: sending it whole is safe
                return await self._through_cluster("EVAL", script.body, len(keys), *keys, *args)

        return await self._send(
            keys[0], lambda master: master.run(script, keys, args), through_cluster
        )

    async def _send(
        self,
        key: Arg,
        on_master: Callable[[SharedPipeline], Awaitable[Any]],
        through_cluster: Callable[[], Awaitable[Any]],
    ) -> Any:
        for pause in (*DOWN_PAUSES, None):
            try:
                try:
                    return await on_master(await self._master(key))
                except _ELSEWHERE:
                    return await through_cluster()
            except _DOWN:
                if pause is None:
                    raise
                await asyncio.sleep(pause)
        raise AssertionError("unreachable")  # the last pause re-raises

    async def aclose(self) -> None:
        """Close the masters' clients (not the cluster client, which its owner closes)."""
        await asyncio.gather(*(master.aclose() for master in self._masters.values()))
        await asyncio.gather(*(master.redis.aclose() for master in self._masters.values()))

    async def _through_cluster(self, *command: Arg) -> Any:
        """The command sent by the cluster client, one at a time: on a lost master it
        reloads its map of slots, closing the connections of the old one, which commands of
        its own in flight on them then meet half-connected (redis-py 8.1 raises
        AttributeError there). A cluster it cannot reach at all is a RedisError as one Redis
        out of reach is, which callers know how to take."""
        async with self._rerouting:
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
            master = self._masters[node.name] = self._connect(node.host, int(node.port))
        return master
