"""Runtime switches on every database (stored, versioned, audited; concurrent changes take
turns), the news through Redis pub/sub, and a board that hears a change made elsewhere."""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta

import pytest
from redis.asyncio.cluster import RedisCluster
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.redis_commands import RedisClient
from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.repositories.switches import SqlSwitchStore
from raffle.adapters.sql.unit_of_work import create_engine
from raffle.adapters.switch_news import PolledSwitchNews, RedisSwitchNews
from raffle.service.switchboard import SwitchBoard

AT = datetime(2026, 11, 24, 12, tzinfo=UTC)
LIMITS = {"draws_per_second": 10, "registrations_per_hour": 20, "draw_batch_size": 64}
DEADLINE_SECONDS = 10.0  # how long a test waits for news before failing (not a speed bound)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade(database_url)
    engine = create_engine(database_url)
    yield engine
    await engine.dispose()


async def test_a_change_is_stored_versioned_and_audited_with_who_and_when(
    engine: AsyncEngine,
) -> None:
    store = SqlSwitchStore(engine)
    assert await store.load() == (0, {})
    first = await store.change("activity.7.draws", "off", "on", "root", AT)
    assert first is not None
    assert (first.version, first.old, first.new) == (1, "on", "off")
    assert await store.change("activity.7.draws", "off", "on", "eve", AT) is None  # no change
    assert await store.version() == 1
    later = AT + timedelta(minutes=1)
    await store.change("activity.7.draws", "on", "on", "ann", later)
    await store.change("draws_per_second", "3", "10", "ann", later)
    assert await store.load() == (3, {"activity.7.draws": "on", "draws_per_second": "3"})
    audit = await store.audit(10)
    assert [(c.version, c.name, c.old, c.new, c.actor, c.at) for c in audit] == [
        (3, "draws_per_second", "10", "3", "ann", later),
        (2, "activity.7.draws", "off", "on", "ann", later),
        (1, "activity.7.draws", "on", "off", "root", AT),
    ]
    assert [c.version for c in await store.audit(1)] == [3]


async def test_concurrent_changes_take_turns_and_each_audits_the_value_before_it(
    engine: AsyncEngine,
) -> None:
    store = SqlSwitchStore(engine)
    values = [str(n) for n in range(2, 12)]
    await asyncio.gather(*(store.change("draw_batch_size", v, "64", f"op{v}", AT) for v in values))
    audit = sorted(await store.audit(100), key=lambda c: c.version)
    assert [c.version for c in audit] == list(range(1, len(values) + 1))
    assert audit[0].old == "64"
    for before, after in itertools.pairwise(audit):
        assert after.old == before.new  # no change was lost between two others
    assert sorted(c.new for c in audit) == sorted(values)
    assert (await store.load())[1] == {"draw_batch_size": audit[-1].new}


async def _until(check: Callable[[], bool], what: str) -> None:
    deadline = asyncio.get_running_loop().time() + DEADLINE_SECONDS
    while not check():
        assert asyncio.get_running_loop().time() < deadline, f"never saw {what}"
        await asyncio.sleep(0.02)


async def test_a_board_hears_a_change_made_by_another_process_through_redis(
    engine: AsyncEngine, redis: RedisClient
) -> None:
    channel = f"test:{uuid.uuid4().hex}"
    # Looks of their own only every minute: what it hears comes through the channel.
    listening = SwitchBoard(
        SqlSwitchStore(engine), RedisSwitchNews(redis, channel=channel, check_every=60), LIMITS
    )
    changing = SwitchBoard(SqlSwitchStore(engine), RedisSwitchNews(redis, channel=channel), LIMITS)
    watching = asyncio.create_task(listening.watch())
    try:
        await _until_subscribed(redis, channel)
        change = await changing.store.change("activity.7.draws", "off", "on", "root", AT)
        assert change is not None
        await changing.news.announce(change.version)
        await _until(lambda: 7 in listening.current.paused, "the change")
    finally:
        watching.cancel()
    assert listening.current.version == 1


async def _subscribers(redis: RedisClient, channel: str) -> int:
    """Subscribers to the channel; on a cluster, each node counts its own clients only."""
    if isinstance(redis, RedisCluster):
        answer = await redis.pubsub_numsub(channel, target_nodes=RedisCluster.ALL_NODES)
    else:
        answer = await redis.pubsub_numsub(channel)
    return int(answer[0][1])


async def _until_subscribed(redis: RedisClient, channel: str) -> None:
    deadline = asyncio.get_running_loop().time() + DEADLINE_SECONDS
    while await _subscribers(redis, channel) < 1:
        assert asyncio.get_running_loop().time() < deadline, "never subscribed"
        await asyncio.sleep(0.02)


async def test_without_redis_a_board_finds_a_change_by_polling(engine: AsyncEngine) -> None:
    board = SwitchBoard(SqlSwitchStore(engine), PolledSwitchNews(interval=0.05), LIMITS)
    sizes: list[int] = []
    board.listen(lambda before, now: sizes.append(now.limits["draw_batch_size"]))
    watching = asyncio.create_task(board.watch())
    try:
        await SqlSwitchStore(engine).change("draw_batch_size", "8", "64", "root", AT)
        await _until(lambda: board.current.limits["draw_batch_size"] == 8, "the change")
    finally:
        watching.cancel()
    assert sizes == [8]
