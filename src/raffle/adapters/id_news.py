"""News of changed ids (profiles' users, ended sessions) on Redis pub/sub, for every process."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection

from raffle.adapters.redis_commands import RedisClient

EVERYONE = "*"  # the message for "any id may have changed"
IDS_A_MESSAGE = 1000  # ids of 70 characters at most: a message stays well under 128 KiB


class RedisIdNews:
    """Changed ids, space separated, published on a channel every process subscribes to;
    `*` for all of them."""

    def __init__(self, redis: RedisClient, *, channel: str) -> None:
        self._redis = redis
        self.channel = channel

    async def announce(self, ids: Collection[str] | None) -> None:
        if ids is None:
            await self._redis.publish(self.channel, EVERYONE)
            return
        listed = list(ids)
        for start in range(0, len(listed), IDS_A_MESSAGE):
            await self._redis.publish(self.channel, " ".join(listed[start : start + IDS_A_MESSAGE]))

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
