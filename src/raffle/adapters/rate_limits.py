"""Fixed-window rate limiters: in process memory, or in Redis shared by every process.

A key's window opens at its first event and lasts `window_seconds`; the events of a window
are counted, and once the window ends the count starts again from zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from raffle.adapters.redis_commands import RedisClient, RedisCommands
from raffle.adapters.redis_pipeline import LuaScript
from raffle.service.ports import Clock

PRUNE_EVERY_SECONDS = 60.0


def _wait_seconds(left: float) -> int:
    """Whole seconds to wait for a window with `left` seconds to run; at least 1."""
    return max(1, math.ceil(left))


@dataclass(slots=True)
class _Window:
    ends_at: float  # a POSIX timestamp
    count: int


class MemoryRateLimiter:
    """For one process (the embedded default) and tests. Safe on one event loop: no awaits."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._windows: dict[str, _Window] = {}
        self._pruned_at = 0.0

    async def hit(self, key: str, limit: int, window_seconds: int) -> int:
        now = self._clock.now().timestamp()
        self._prune(now)
        window = self._windows.get(key)
        if window is None or window.ends_at <= now:
            window = self._windows[key] = _Window(now + window_seconds, 0)
        window.count += 1
        return 0 if window.count <= limit else _wait_seconds(window.ends_at - now)

    async def count(self, key: str, window_seconds: int) -> int:
        window = self._windows.get(key)
        if window is None or window.ends_at <= self._clock.now().timestamp():
            return 0
        return window.count

    async def reset(self, key: str) -> None:
        self._windows.pop(key, None)

    def _prune(self, now: float) -> None:
        # Forget ended windows now and then, so keys seen once (say, a scan of names) go away.
        if now - self._pruned_at < PRUNE_EVERY_SECONDS:
            return
        self._pruned_at = now
        for key in [key for key, window in self._windows.items() if window.ends_at <= now]:
            del self._windows[key]


# INCR, and start the window's expiry if the key has none (its first event, or a key left
# without one): all in one script, so no event is counted outside a window. Returns 0 within
# the limit, else the milliseconds left in the window.
_HIT = LuaScript("""
local count = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    left = tonumber(ARGV[2])
end
if count <= tonumber(ARGV[1]) then
    return 0
end
return math.max(left, 1)
""")


class RedisRateLimiter:
    """One counter key per limited key, expiring with its window; shared by every process."""

    def __init__(
        self, redis: RedisClient, *, prefix: str = "raffle:rl:", commands: RedisCommands
    ) -> None:
        self._redis = redis
        self._prefix = prefix
        self._commands = commands

    async def hit(self, key: str, limit: int, window_seconds: int) -> int:
        keys, args = [self._prefix + key], [limit, window_seconds * 1000]
        left_ms = int(await self._commands.run(_HIT, keys, args))
        return 0 if left_ms == 0 else _wait_seconds(left_ms / 1000)

    async def count(self, key: str, window_seconds: int) -> int:
        value = await self._redis.get(self._prefix + key)
        return 0 if value is None else int(value)

    async def reset(self, key: str) -> None:
        await self._redis.delete(self._prefix + key)
