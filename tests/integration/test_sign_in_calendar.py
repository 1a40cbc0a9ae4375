"""The Redis sign-in bitmap against a real Redis (one server, and a cluster): marks, reads, and
rebuilds from the truth."""

from __future__ import annotations

import uuid
from datetime import date

import pytest
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from raffle.adapters.redis_commands import RedisClient
from raffle.adapters.sign_in_calendar import RedisSignInCalendar

NOV, DEC = date(2026, 11, 1), date(2026, 12, 1)


class Truth:
    """The rebate orders, as the database would answer; counts how often it is asked."""

    def __init__(self) -> None:
        self.days: dict[tuple[str, int, date], set[int]] = {}
        self.reads = 0

    def sign(self, user: str, day: date) -> None:
        self.days.setdefault((user, 7, day.replace(day=1)), set()).add(day.day)

    async def load(self, user: str, activity: int, month: date) -> frozenset[int]:
        self.reads += 1
        return frozenset(self.days.get((user, activity, month.replace(day=1)), set()))


@pytest.fixture
def truth() -> Truth:
    return Truth()


@pytest.fixture
def calendar(redis: RedisClient, truth: Truth) -> RedisSignInCalendar:
    return RedisSignInCalendar(redis, truth.load, prefix=f"test:{uuid.uuid4().hex}:")


async def _sign(calendar: RedisSignInCalendar, truth: Truth, user: str, day: date) -> None:
    truth.sign(user, day)  # committed first, marked after: the order the use case keeps
    await calendar.mark(user, 7, day)


async def test_a_month_is_read_from_the_bitmap_once_built(
    calendar: RedisSignInCalendar, truth: Truth, redis: RedisClient
) -> None:
    for d in (1, 2, 15, 30):
        await _sign(calendar, truth, "alice", date(2026, 11, d))
    await _sign(calendar, truth, "alice", date(2026, 12, 31))
    assert await calendar.month("alice", 7, NOV) == {1, 2, 15, 30}
    assert truth.reads == 1  # marks alone do not make a month trusted: built once
    await _sign(calendar, truth, "alice", date(2026, 11, 16))
    assert await calendar.month("alice", 7, NOV) == {1, 2, 15, 16, 30}
    assert await calendar.month("alice", 7, DEC) == {31}
    assert truth.reads == 2
    key = calendar.key("alice", 7, NOV)
    assert await redis.getbit(key, 16) == 1
    assert await redis.bitcount(key) == 6  # five days and the "built" bit
    assert 0 < await redis.ttl(key) <= 24 * 3600


async def test_a_lost_key_is_rebuilt_from_the_database(
    calendar: RedisSignInCalendar, truth: Truth, redis: RedisClient
) -> None:
    for d in (3, 4, 5):
        await _sign(calendar, truth, "bob", date(2026, 11, d))
    assert await calendar.month("bob", 7, NOV) == {3, 4, 5}
    await redis.delete(calendar.key("bob", 7, NOV))  # evicted, flushed, a failover...
    await _sign(calendar, truth, "bob", date(2026, 11, 6))  # marks a key with no history
    assert await calendar.month("bob", 7, NOV) == {3, 4, 5, 6}
    assert truth.reads == 2
    assert await calendar.month("bob", 7, NOV) == {3, 4, 5, 6}
    assert truth.reads == 2


async def test_an_empty_month_is_remembered_as_empty(
    calendar: RedisSignInCalendar, truth: Truth
) -> None:
    assert await calendar.month("carol", 7, NOV) == frozenset()
    assert await calendar.month("carol", 7, NOV) == frozenset()
    assert truth.reads == 1
    assert await calendar.month("carol", 8, NOV) == frozenset()  # another activity's key
    assert truth.reads == 2


async def test_a_redis_that_does_not_answer_falls_back_to_the_database(truth: Truth) -> None:
    # Nothing listens on port 1; no retries, so the test does not wait out their back-off.
    dead = Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0))
    calendar = RedisSignInCalendar(dead, truth.load)
    try:
        await calendar.mark("dave", 7, date(2026, 11, 9))  # logged, not raised
        truth.sign("dave", date(2026, 11, 9))
        assert await calendar.month("dave", 7, NOV) == {9}
    finally:
        await dead.aclose()
