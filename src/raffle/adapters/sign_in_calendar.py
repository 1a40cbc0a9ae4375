"""Sign-in calendars: a Redis bitmap per user, activity and month (production), or the
rebate orders read straight from the database (embedded). The database is the truth: the
bitmap is written after commit and rebuilt from it when missing."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import date

from redis.exceptions import RedisClusterException, RedisError

from raffle.adapters.redis_commands import RedisClient

log = logging.getLogger(__name__)

# A cluster client that reaches no node raises the second, which is not a RedisError.
_UNREACHABLE = (RedisError, RedisClusterException)

# The days (1-31) the user signed in during the month of the date given.
LoadMonth = Callable[[str, int, date], Awaitable[frozenset[int]]]

# Bit 0 says "built from the database": a key made only by marks after it was lost (or
# never read) lacks it and is rebuilt on the next read. Bits 1-31 are the days, so a
# month is one 32-bit field, read with a single BITFIELD GET.
BUILT = 0


class DatabaseSignInCalendar:
    """Embedded: every read asks the database; there is nothing to mark."""

    def __init__(self, load: LoadMonth) -> None:
        self._load = load

    async def mark(self, user_id: str, activity_id: int, day: date) -> None:
        return None

    async def month(self, user_id: str, activity_id: int, month: date) -> frozenset[int]:
        return await self._load(user_id, activity_id, month)


class RedisSignInCalendar:
    """SETBIT per sign-in, BITFIELD to read a month.

    Keys expire `ttl_seconds` after their last write: a mark lost after commit (Redis down
    at that moment) leaves a month short by a day for at most that long.
    """

    def __init__(
        self,
        redis: RedisClient,
        load: LoadMonth,
        *,
        ttl_seconds: int = 24 * 3600,
        prefix: str = "raffle:sign-in:",
    ) -> None:
        self._redis = redis
        self._load = load
        self._ttl = ttl_seconds
        self._prefix = prefix

    def key(self, user_id: str, activity_id: int, month: date) -> str:
        return f"{self._prefix}{activity_id}:{user_id}:{month:%Y-%m}"

    async def mark(self, user_id: str, activity_id: int, day: date) -> None:
        key = self.key(user_id, activity_id, day)
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.setbit(key, day.day, 1)
                pipe.expire(key, self._ttl)
                await pipe.execute()
        except _UNREACHABLE:
            # Committed already; the calendar catches up when the key is rebuilt.
            log.warning("sign-in of %s on %s not marked in Redis", user_id, day, exc_info=True)

    async def month(self, user_id: str, activity_id: int, month: date) -> frozenset[int]:
        key = self.key(user_id, activity_id, month)
        try:
            bits = (await self._redis.execute_command("BITFIELD", key, "GET", "u32", 0))[0]
        except _UNREACHABLE:
            log.warning("sign-in calendar unreadable in Redis; reading the database", exc_info=True)
            return await self._load(user_id, activity_id, month)
        if bits >> (31 - BUILT) & 1:
            return frozenset(d for d in range(1, 32) if bits >> (31 - d) & 1)
        return await self._rebuild(key, user_id, activity_id, month)

    async def _rebuild(
        self, key: str, user_id: str, activity_id: int, month: date
    ) -> frozenset[int]:
        days = await self._load(user_id, activity_id, month)
        # Bits are only ever set: a mark racing with the rebuild is kept either way.
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                for offset in (BUILT, *days):
                    pipe.setbit(key, offset, 1)
                pipe.expire(key, self._ttl)
                await pipe.execute()
        except _UNREACHABLE:
            log.warning("sign-in calendar not rebuilt in Redis", exc_info=True)
        return days
