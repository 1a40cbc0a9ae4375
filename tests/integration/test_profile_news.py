"""Profiles kept per process, on real Redis (one, then a cluster): reads after the first cost no
database round trip, and a change made by one process is forgotten by the others through
Redis pub/sub, for one user, for an import's thousands, and after the subscription dropped."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.id_news import RedisIdNews
from raffle.adapters.phones import PhoneBook
from raffle.adapters.profile_file import read_profiles
from raffle.adapters.redis_commands import RedisClient
from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.profiles import Profile
from raffle.service.profile_cache import CachedProfiles
from raffle.service.profile_import import import_profiles
from raffle.service.profiles import ProfileCare, put_profile
from tests.integration.redis_clients import all_nodes, total
from tests.unit.fakes import FakeClock

DEADLINE_SECONDS = 10.0  # how long a test waits for news before failing (not a speed bound)


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'raffle.db'}"
    await upgrade(url)
    engine = create_engine(url)
    yield engine
    await engine.dispose()


class Process:
    """What one API process holds: its cache, on its own subscription, counting its reads."""

    def __init__(self, engine: AsyncEngine, redis: RedisClient, channel: str) -> None:
        self.reads = 0
        self.engine = engine

        async def read(user_id: str) -> Profile | None:
            self.reads += 1
            async with SqlUnitOfWork(engine) as uow:
                return await uow.profiles.get(user_id)

        news = RedisIdNews(redis, channel=channel)
        self.profiles = CachedProfiles(read, news, ttl=3600)  # only news makes it forget
        self.care = ProfileCare(
            lambda: SqlUnitOfWork(engine), PhoneBook("CN"), self.profiles,
            FakeClock(datetime(2026, 11, 24, tzinfo=UTC)),
        )  # fmt: skip


@dataclass
class Processes:
    engine: AsyncEngine
    redis: RedisClient
    channel: str = field(default_factory=lambda: f"test:{uuid.uuid4().hex}")
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def start(self, count: int) -> list[Process]:
        """`count` processes, once each is subscribed."""
        started = [Process(self.engine, self.redis, self.channel) for _ in range(count)]
        self.tasks.extend(asyncio.create_task(p.profiles.watch()) for p in started)
        deadline = asyncio.get_running_loop().time() + DEADLINE_SECONDS
        while await self._subscribers() < count:
            assert asyncio.get_running_loop().time() < deadline, "never subscribed"
            await asyncio.sleep(0.02)
        return started

    async def _subscribers(self) -> int:
        answer = await self.redis.pubsub_numsub(self.channel, **all_nodes(self.redis))
        return int(answer[0][1])


@pytest.fixture
async def processes(engine: AsyncEngine, redis: RedisClient) -> AsyncIterator[Processes]:
    made = Processes(engine, redis)
    yield made
    for task in made.tasks:
        task.cancel()


async def _until(check: Callable[[], object], what: str) -> None:
    deadline = asyncio.get_running_loop().time() + DEADLINE_SECONDS
    while not check():
        assert asyncio.get_running_loop().time() < deadline, f"never saw {what}"
        await asyncio.sleep(0.02)


async def test_reads_after_the_first_cost_no_database_round_trip(
    processes: Processes,
) -> None:
    (one,) = await processes.start(1)
    await put_profile("alice", {"level": 3}, one.care)
    one.reads = 0
    answers = await asyncio.gather(*(one.profiles.of("alice") for _ in range(500)))
    assert {a.level for a in answers} == {3}
    assert one.reads <= 1


async def test_a_change_in_one_process_is_seen_by_every_other(
    processes: Processes,
) -> None:
    changing, *others = await processes.start(3)
    await put_profile("alice", {"level": 1}, changing.care)
    for process in others:
        assert (await process.profiles.of("alice")).level == 1  # now kept there
        assert (await process.profiles.of("bob")) == Profile("bob")  # kept as empty

    await put_profile("alice", {"level": 2}, changing.care)
    await put_profile("bob", {"region": "上海"}, changing.care)
    for process in others:
        await _until(lambda p=process: p.profiles._kept.get("alice") is None, "the news")
        assert (await process.profiles.of("alice")).level == 2
        await _until(lambda p=process: p.profiles._kept.get("bob") is None, "bob's news")
        assert (await process.profiles.of("bob")).region == "上海"


async def test_an_import_is_announced_for_every_user_it_changed(
    processes: Processes,
) -> None:
    importing, other = await processes.start(2)
    users = [f"u{n:04d}" for n in range(1200)]  # more than one message and one chunk
    for user in users:
        await other.profiles.of(user)
    assert len(other.profiles._kept) == 1200
    text = "user_id,level\n" + "".join(f"{u},7\n" for u in users)
    report = await import_profiles(read_profiles(text, "csv"), importing.care)
    assert report.created == 1200
    await _until(lambda: not other.profiles._kept, "every user forgotten")
    assert {(await other.profiles.of(u)).level for u in users} == {7}


async def test_a_dropped_subscription_forgets_everything_it_may_have_missed(
    processes: Processes,
) -> None:
    (listening,) = await processes.start(1)
    redis = processes.redis
    await listening.profiles.of("alice")
    assert "alice" in listening.profiles._kept
    # The subscription's connection killed on the server, as a Redis restart would.
    killed = await redis.client_kill_filter(_type="pubsub", **all_nodes(redis))
    assert total(killed) >= 1
    await _until(lambda: "alice" not in listening.profiles._kept, "everything forgotten")
