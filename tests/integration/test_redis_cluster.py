"""The shared round trips on a 3-master Redis Cluster: each master's commands go together,
each caller gets its own reply or error, scripts survive flushed script caches, and a slot
moved to another master is followed; bootstrap wires them when told to; switch news heard."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ResponseError

from raffle.adapters.redis_cluster import ClusterCommands
from raffle.adapters.redis_pipeline import LuaScript
from raffle.adapters.switch_news import RedisSwitchNews
from raffle.bootstrap import bootstrap
from raffle.domain.users import Session
from raffle.settings import Settings
from tests.integration.redis_clients import connected, master

IN_FLIGHT = 500
_ADD = LuaScript("return redis.call('INCRBY', KEYS[1], ARGV[1])")


@pytest.fixture
async def cluster(request: pytest.FixtureRequest) -> AsyncIterator[RedisCluster]:
    async with connected(request, "redis-cluster") as (client, _):
        assert isinstance(client, RedisCluster)
        await client.initialize()
        yield client


@pytest.fixture
async def commands(cluster: RedisCluster) -> AsyncIterator[ClusterCommands]:
    commands = ClusterCommands(cluster, master)
    yield commands
    await commands.aclose()


async def test_commands_go_in_batches_to_the_master_of_their_keys_slot(
    cluster: RedisCluster, commands: ClusterCommands, prefix: str
) -> None:
    keys = [f"{prefix}{i}" for i in range(IN_FLIGHT)]
    await cluster.script_load(_ADD.body)  # on every master: else each first EVALSHA meets NOSCRIPT
    replies = await asyncio.gather(*(commands.run(_ADD, [k], [i]) for i, k in enumerate(keys)))
    assert replies == list(range(IN_FLIGHT))
    assert len({cluster.get_node_from_key(k).name for k in keys}) == 3  # type: ignore[union-attr]
    assert commands.commands == IN_FLIGHT  # each once...
    assert commands.round_trips <= IN_FLIGHT / 10  # ...in batches per master
    for i in (0, 17, IN_FLIGHT - 1):  # written where the cluster client reads them
        assert await cluster.get(keys[i]) == str(i).encode()


async def test_one_failing_command_fails_only_its_caller(
    cluster: RedisCluster, commands: ClusterCommands, prefix: str
) -> None:
    await cluster.hset(prefix + "hash", "field", "1")  # INCR on a hash: WRONGTYPE
    calls = [commands.execute("INCR", prefix + ("hash" if i == 7 else str(i))) for i in range(50)]
    replies = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(replies[7], ResponseError)
    assert replies[:7] + replies[8:] == [1] * 49


async def test_scripts_run_again_after_every_master_flushed_its_scripts(
    cluster: RedisCluster, commands: ClusterCommands, prefix: str
) -> None:
    keys = [f"{prefix}{i}" for i in range(30)]  # on every master
    assert await asyncio.gather(*(commands.run(_ADD, [k], [1]) for k in keys)) == [1] * 30
    await cluster.script_flush()  # every master, as after their restart
    assert await asyncio.gather(*(commands.run(_ADD, [k], [1]) for k in keys)) == [2] * 30


async def test_a_slot_moved_to_another_master_is_followed(
    cluster: RedisCluster, commands: ClusterCommands, prefix: str
) -> None:
    key = prefix + "moving"
    assert await commands.execute("SET", key, "v") is True
    slot = cluster.keyslot(key)
    source = cluster.get_node_from_key(key)
    assert source is not None
    target = next(n for n in cluster.get_primaries() if n.name != source.name)
    await _move(cluster, slot, key, source.name, target.name)
    try:
        # Our map still names the old master, which answers MOVED: the command goes again
        # through the cluster client, which follows it and updates the map.
        assert await commands.execute("GETEX", key, "EX", 60) == b"v"
        after = cluster.get_node_from_key(key)
        assert after is not None
        assert after.name == target.name
    finally:
        await _move(cluster, slot, key, target.name, source.name)


async def _move(cluster: RedisCluster, slot: int, key: str, source: str, target: str) -> None:
    """Migrate `slot` (holding `key` only) from one master to another, as resharding does."""
    host, port = source.rsplit(":", 1)
    to_host, to_port = target.rsplit(":", 1)
    async with (
        Redis(host=host, port=int(port)) as src,
        Redis(host=to_host, port=int(to_port)) as dst,
    ):
        src_id = await src.execute_command("CLUSTER", "MYID")
        dst_id = await dst.execute_command("CLUSTER", "MYID")
        await dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
        await src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
        await src.execute_command("MIGRATE", to_host, int(to_port), "", 0, 5000, "KEYS", key)
        for node in (dst, src):
            await node.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
        for name in {n.name for n in cluster.get_primaries()} - {source, target}:
            h, p = name.rsplit(":", 1)
            async with Redis(host=h, port=int(p)) as other:
                await other.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)


async def test_bootstrap_wires_the_cluster_when_the_setting_says_so(
    redis_cluster_url: str, tmp_path: Path
) -> None:
    database = f"sqlite:///{tmp_path}/raffle.db"
    raffle = bootstrap(
        Settings(database_url=database, redis_url=redis_cluster_url, redis_cluster=True)
    )
    try:
        assert isinstance(raffle.redis, RedisCluster)
        assert isinstance(raffle.redis_commands, ClusterCommands)
        await raffle.sessions.create(Session("alice", False, datetime.now(UTC)), "hash", 60)
        touched = await raffle.sessions.touch("hash", 60)
        assert touched is not None
        assert touched.user_id == "alice"
        assert raffle.redis_commands.commands == 1  # the touch, through a master's round trips
    finally:
        await raffle.redis.delete("raffle:session:hash")
        await raffle.close()


async def test_switch_news_is_heard_through_the_cluster(cluster: RedisCluster) -> None:
    news = RedisSwitchNews(cluster, channel=f"test:{uuid.uuid4().hex}", check_every=30)
    changes = news.changes().__aiter__()
    await changes.__anext__()  # subscribed
    try:
        await news.announce(7)
        await asyncio.wait_for(changes.__anext__(), 5)  # heard, long before the 30 s look
    finally:
        await changes.aclose()
