"""The cache of orders' QR content: in Redis (every process sees it) or in this process."""

from __future__ import annotations

from datetime import datetime, timedelta

from raffle.adapters.redis_commands import RedisClient
from raffle.service.ports import Clock

PREFIX = "qr:"


class RedisQrCodes:
    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis

    async def get(self, out_trade_no: str) -> str | None:
        found = await self._redis.get(PREFIX + out_trade_no)
        return None if found is None else found.decode() if isinstance(found, bytes) else str(found)

    async def put(self, out_trade_no: str, content: str, seconds: int) -> None:
        await self._redis.set(PREFIX + out_trade_no, content, ex=max(1, seconds))

    async def drop(self, out_trade_no: str) -> None:
        await self._redis.delete(PREFIX + out_trade_no)


class MemoryQrCodes:
    """The embedded default's: one process serves every request."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._codes: dict[str, tuple[str, datetime]] = {}

    async def get(self, out_trade_no: str) -> str | None:
        found = self._codes.get(out_trade_no)
        if found is None:
            return None
        content, until = found
        if self._clock.now() >= until:
            del self._codes[out_trade_no]
            return None
        return content

    async def put(self, out_trade_no: str, content: str, seconds: int) -> None:
        self._codes[out_trade_no] = (content, self._clock.now() + timedelta(seconds=seconds))

    async def drop(self, out_trade_no: str) -> None:
        self._codes.pop(out_trade_no, None)
