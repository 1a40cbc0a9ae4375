"""Chance hints (service/refusals.py): in process memory, or in Redis shared by every process.

Each quota account has a record: its generation, its mark (generation and scope) with the
time it is trusted until, and the keys of draws that went to the database; beside it, the
credits in flight with their deadlines. The record lives `KEEP_SECONDS` past its last write,
so its marks and remembered keys go together.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from raffle.adapters.redis_pipeline import LuaScript, SharedPipeline
from raffle.service.ports import Holder, Look

MARK_SECONDS = 300  # a mark's life: bounds a refusal made wrong by what the rule cannot see
CREDIT_SECONDS = 600  # a credit in flight voids marks this long at most (its process died)
KEEP_SECONDS = 86_400  # as long as a draw's Idempotency-Key replays (entrypoints/worker.py)
PRUNE_EVERY_SECONDS = 60.0
MARK_MS, CREDIT_MS, KEEP_MS = MARK_SECONDS * 1000, CREDIT_SECONDS * 1000, KEEP_SECONDS * 1000

REFUSED = Look(refused=True, generation=None)


def _key_field(request_key: str | None) -> str:
    """A request key as remembered: a short digest (two keys that collide both go to the
    database, which is only slower)."""
    if request_key is None:
        return ""
    return "k:" + hashlib.blake2b(request_key.encode(), digest_size=8).hexdigest()


def _generation() -> str:
    return secrets.token_hex(8)


@dataclass(slots=True)
class _Record:
    generation: str
    expires_at: float
    mark: str = ""
    mark_until: float = 0.0
    keys: set[str] = field(default_factory=set)
    credits: dict[str, float] = field(default_factory=dict)  # credit -> deadline

    def busy(self, now: float) -> bool:
        return any(deadline >= now for deadline in self.credits.values())


class MemoryChanceHints:
    """For one process (the embedded default) and tests. Safe on one event loop: no awaits."""

    def __init__(self) -> None:
        self._records: dict[Holder, _Record] = {}
        self._pruned_at = 0.0

    async def look(
        self, holder: Holder, scope: str, request_key: str | None, now: datetime
    ) -> Look:
        at = now.timestamp()
        record = self._record(holder, at)
        key = _key_field(request_key)
        if record.busy(at):
            self._remember(record, key, at)
            return Look(refused=False, generation=None)
        if (
            record.mark == f"{record.generation}|{scope}"
            and record.mark_until > at
            and key not in record.keys
        ):
            return REFUSED
        self._remember(record, key, at)
        return Look(refused=False, generation=record.generation)

    async def mark(self, holder: Holder, scope: str, generation: str, now: datetime) -> None:
        at = now.timestamp()
        record = self._record(holder, at)
        if record.generation == generation and not record.busy(at):
            record.mark, record.mark_until = f"{generation}|{scope}", at + MARK_SECONDS
            record.expires_at = at + KEEP_SECONDS

    async def begin_credit(self, holders: Sequence[Holder], credit: str, now: datetime) -> None:
        at = now.timestamp()
        for holder in holders:
            record = self._record(holder, at)
            record.credits = {c: d for c, d in record.credits.items() if d >= at}
            record.credits[credit] = at + CREDIT_SECONDS
            record.generation, record.expires_at = _generation(), at + KEEP_SECONDS

    async def end_credit(self, holders: Sequence[Holder], credit: str, now: datetime) -> None:
        at = now.timestamp()
        for holder in holders:
            record = self._record(holder, at)
            record.credits.pop(credit, None)
            record.generation, record.expires_at = _generation(), at + KEEP_SECONDS

    def _record(self, holder: Holder, at: float) -> _Record:
        self._prune(at)
        record = self._records.get(holder)
        if record is None or (record.expires_at <= at and not record.busy(at)):
            record = self._records[holder] = _Record(_generation(), at + KEEP_SECONDS)
        return record

    @staticmethod
    def _remember(record: _Record, key: str, at: float) -> None:
        if key:
            record.keys.add(key)
            record.expires_at = at + KEEP_SECONDS

    def _prune(self, at: float) -> None:
        # Now and then, so accounts seen once do not stay.
        if at - self._pruned_at < PRUNE_EVERY_SECONDS:
            return
        self._pruned_at = at
        for holder, record in list(self._records.items()):
            if record.expires_at <= at and not record.busy(at):
                del self._records[holder]


# KEYS: the record, the credits in flight. ARGV: now (ms), a generation for a new record,
# the scope, the key field ('' without a key), the record's life (ms). Returns 1 to refuse,
# else the generation to mark with ('' while a credit is in flight: no mark).
_LOOK = LuaScript("""
local gen = redis.call('HGET', KEYS[1], 'gen')
if not gen then
    gen = ARGV[2]
    redis.call('HSET', KEYS[1], 'gen', gen)
    redis.call('PEXPIRE', KEYS[1], ARGV[5])
end
local busy = redis.call('ZCOUNT', KEYS[2], ARGV[1], '+inf') > 0
if not busy then
    local mark = redis.call('HMGET', KEYS[1], 'mark', 'until')
    local seen = ARGV[4] ~= '' and redis.call('HEXISTS', KEYS[1], ARGV[4]) == 1
    if mark[1] == gen .. '|' .. ARGV[3] and tonumber(mark[2]) > tonumber(ARGV[1])
            and not seen then
        return 1
    end
end
if ARGV[4] ~= '' then
    redis.call('HSET', KEYS[1], ARGV[4], 1)
    redis.call('PEXPIRE', KEYS[1], ARGV[5])
end
if busy then
    return ''
end
return gen
""")

# ARGV: the generation read, the scope, now (ms), the mark's life (ms), the record's life.
_MARK = LuaScript("""
if redis.call('HGET', KEYS[1], 'gen') ~= ARGV[1]
        or redis.call('ZCOUNT', KEYS[2], ARGV[3], '+inf') > 0 then
    return 0
end
redis.call('HSET', KEYS[1], 'mark', ARGV[1] .. '|' .. ARGV[2],
    'until', tonumber(ARGV[3]) + tonumber(ARGV[4]))
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
""")

# ARGV: the credit, now (ms), a new generation, the credit's life (ms), the record's life.
_BEGIN = LuaScript("""
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[2])
redis.call('ZADD', KEYS[2], tonumber(ARGV[2]) + tonumber(ARGV[4]), ARGV[1])
redis.call('PEXPIRE', KEYS[2], 2 * tonumber(ARGV[4]))
redis.call('HSET', KEYS[1], 'gen', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
""")

# ARGV: the credit, a new generation, the record's life (ms).
_END = LuaScript("""
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[1], 'gen', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
""")


def _ms(now: datetime) -> int:
    return int(now.timestamp() * 1000)


class RedisChanceHints:
    """A hash per account and a sorted set of its credits in flight, under one hash tag (one
    Redis Cluster slot); every call is one script, sent through the shared round trips."""

    def __init__(self, commands: SharedPipeline, *, prefix: str = "raffle:chances:") -> None:
        self._commands = commands
        self._prefix = prefix

    async def look(
        self, holder: Holder, scope: str, request_key: str | None, now: datetime
    ) -> Look:
        key = _key_field(request_key)
        reply = await self._run(_LOOK, holder, _ms(now), _generation(), scope, key, KEEP_MS)
        if reply == 1:
            return REFUSED
        generation = reply.decode() if isinstance(reply, bytes) else str(reply)
        return Look(refused=False, generation=generation or None)

    async def mark(self, holder: Holder, scope: str, generation: str, now: datetime) -> None:
        await self._run(_MARK, holder, generation, scope, _ms(now), MARK_MS, KEEP_MS)

    async def begin_credit(self, holders: Sequence[Holder], credit: str, now: datetime) -> None:
        await asyncio.gather(
            *(
                self._run(_BEGIN, h, credit, _ms(now), _generation(), CREDIT_MS, KEEP_MS)
                for h in holders
            )
        )

    async def end_credit(self, holders: Sequence[Holder], credit: str, now: datetime) -> None:
        await asyncio.gather(*(self._run(_END, h, credit, _generation(), KEEP_MS) for h in holders))

    async def _run(self, script: LuaScript, holder: Holder, *args: str | int) -> Any:
        user_id, activity_id = holder
        record = f"{self._prefix}{{{user_id}:{activity_id}}}"
        return await self._commands.run(script, [record, record + ":credits"], args)
