"""How processes hear that the switches (or tags) changed: Redis pub/sub, or a short poll."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from raffle.adapters.redis_commands import RedisClient

CHANNEL = "raffle:switches"
TAG_NEWS = "raffle:tags"  # the same news of the tags' version (service/audience.py)
DENY_NEWS = "raffle:deny"  # and of the deny lists' (service/deny_board.py)
FLASH_NEWS = "raffle:flash"  # a flash sale's unit came back (service/flash_sales.py)
POLL_SECONDS = 0.5  # without Redis: each process looks at the version this often
# With Redis, a process also looks this often: a message published while its subscription
# was reconnecting is lost, and the next look finds the change.
CHECK_SECONDS = 5.0


class PolledSwitchNews:
    """No announcements: every process looks every `interval` seconds (the store's version
    is one small read)."""

    def __init__(self, interval: float = POLL_SECONDS) -> None:
        self._interval = interval

    async def announce(self, version: int) -> None:
        return None

    async def changes(self) -> AsyncIterator[None]:
        while True:
            yield
            await asyncio.sleep(self._interval)


class RedisSwitchNews:
    """A change is published on a channel every process subscribes to."""

    def __init__(
        self, redis: RedisClient, *, channel: str = CHANNEL, check_every: float = CHECK_SECONDS
    ) -> None:
        self._redis = redis
        self._channel = channel
        self._check_every = check_every

    async def announce(self, version: int) -> None:
        await self._redis.publish(self._channel, str(version))

    async def changes(self) -> AsyncIterator[None]:
        # A cluster client subscribes through its map of slots, read here if no command has
        # yet; on one Redis there is nothing to read.
        await self._redis.initialize()
        async with self._redis.pubsub() as pubsub:
            await pubsub.subscribe(self._channel)
            yield  # subscribed: a change made before is found now
            while True:
                # A message, or the time to look anyway: either way, look.
                await pubsub.get_message(ignore_subscribe_messages=True, timeout=self._check_every)
                yield
