"""How processes hear that profiles changed without Redis: the stored version, polled
(with Redis: id_news.RedisIdNews on PROFILE_NEWS)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Collection

PROFILE_NEWS = "raffle:profiles"
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
