"""A membership change made by one process reaches another through Redis: a separate Python
process holding the tags answers `in` once a user is added to a static tag and `out` once
removed, on every database."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.repositories.tags import SqlTagStore
from raffle.adapters.sql.unit_of_work import create_engine
from raffle.adapters.switch_news import RedisSwitchNews
from raffle.adapters.tag_language import RuleEngineLanguage
from raffle.domain.tags import Tag, TagKind
from raffle.service import tags as use
from raffle.service.audience import TagBoard

DEADLINE_SECONDS = 60.0  # a process starting and hearing of a change: not a speed bound
ROOT = Path(__file__).parents[2]


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade(database_url)
    engine = create_engine(database_url)
    yield engine
    await engine.dispose()


async def _line(process: asyncio.subprocess.Process) -> str:
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), DEADLINE_SECONDS)
    assert line, "the listener stopped"
    return line.decode().strip()


async def _subscribed(redis: Redis, channel: str) -> None:
    deadline = asyncio.get_running_loop().time() + DEADLINE_SECONDS
    while int((await redis.pubsub_numsub(channel))[0][1]) < 1:
        assert asyncio.get_running_loop().time() < deadline, "never subscribed"
        await asyncio.sleep(0.05)


async def test_another_process_hears_a_member_added_and_removed(
    engine: AsyncEngine, database_url: str, redis_url: str
) -> None:
    channel = f"test:{uuid.uuid4().hex}"
    redis = Redis.from_url(redis_url)
    board = TagBoard(
        SqlTagStore(engine), RedisSwitchNews(redis, channel=channel), RuleEngineLanguage()
    )
    await use.save_tag(Tag("beta", TagKind.STATIC), board)
    await use.save_tag(Tag("target", TagKind.DYNAMIC, 'tags["beta"] or level > 5'), board)
    args = [database_url, redis_url, channel, "target", "ann"]
    listener = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.integration.tag_listener", *args,
        cwd=ROOT, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert await _line(listener) == "out"
        await _subscribed(redis, channel)
        for _ in range(3):
            await use.add_members("beta", ["ann"], board)
            assert await _line(listener) == "in"
            await use.remove_members("beta", ["ann"], board)
            assert await _line(listener) == "out"
    finally:
        listener.kill()
        await listener.wait()
        await redis.aclose()
