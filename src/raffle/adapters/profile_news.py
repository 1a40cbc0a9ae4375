"""How processes hear that profiles changed: Redis pub/sub, or the stored version polled."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Collection

from raffle.adapters.redis_commands import RedisClient

CHANNEL = "raffle:profiles"
EVERYONE = "*"  # the message for "any profile may have changed"
IDS_A_MESSAGE = 1000  # user ids of 32 characters at most: a message stays well under 64 KiB
POLL_SECONDS = 0.5  # without Redis: how often the stored version is looked at


class PolledProfileNews:
    """No Redis (the embedded default): nothing is announced; the profiles' stored version
    (one small read) is looked at every `interval` seconds, and when it moved, any profile
    may have changed. The process that changed a profile forgets it at once by itself; this
    is for the others that write the same database (`raffle profile import`)."""

    def __init__(self, version: Callable[[], Awaitable[int]], interval: float = POLL_SECONDS):
        self._version, self._interval = version, interval

    async def announce(self, user_ids: Collection[str] | None) -> None:
        return None

    async def changes(self) -> AsyncIterator[Collection[str] | None]:
        seen = await self._version()
        yield None  # what changed before the first look is unknown
        while True:
            await asyncio.sleep(self._interval)
            if (now := await self._version()) != seen:
                seen = now
                yield None


class RedisProfileNews:
    """Changed user ids, space separated, published on a channel every process subscribes to;
    `*` for all of them."""

    def __init__(self, redis: RedisClient, *, channel: str = CHANNEL) -> None:
        self._redis = redis
        self.channel = channel

    async def announce(self, user_ids: Collection[str] | None) -> None:
        if user_ids is None:
            await self._redis.publish(self.channel, EVERYONE)
            return
        ids = list(user_ids)
        for start in range(0, len(ids), IDS_A_MESSAGE):
            await self._redis.publish(self.channel, " ".join(ids[start : start + IDS_A_MESSAGE]))

    async def changes(self) -> AsyncIterator[Collection[str] | None]:
        await self._redis.initialize()  # a cluster client reads its map of slots first
        async with self._redis.pubsub() as pubsub:
            await pubsub.subscribe(self.channel)
            # Subscribed: whatever changed before, while no one listened, is unknown.
            yield None
            while True:
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=None)
                if message is None:
                    continue
                data = message["data"]
                text = data.decode() if isinstance(data, bytes) else str(data)
                yield None if text == EVERYONE else text.split()
