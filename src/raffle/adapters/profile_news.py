"""How processes hear that profiles changed: Redis pub/sub, or nothing (one process)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Collection

from raffle.adapters.redis_commands import RedisClient

CHANNEL = "raffle:profiles"
EVERYONE = "*"  # the message for "any profile may have changed"
IDS_A_MESSAGE = 1000  # user ids of 32 characters at most: a message stays well under 64 KiB


class LocalProfileNews:
    """No other process to tell (the embedded default): nothing is announced, nothing heard;
    the cache's own forgetting and its time to live do the rest."""

    async def announce(self, user_ids: Collection[str] | None) -> None:
        return None

    async def changes(self) -> AsyncIterator[Collection[str] | None]:
        yield None
        await asyncio.Event().wait()  # never set: there is never news


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
