"""Chance hints (service/refusals.py): in process memory, or in Redis shared by every process.

Each quota account has a record: its generation and its mark (generation and scope) with the
time it is trusted until, living `KEEP_SECONDS` past its last write; beside it, the credits in
flight with their deadlines, and the request keys of draws that went to the database by the
period of `KEEP_SECONDS` they went in, this period's and the last one's looked at, so a key is
remembered at least `KEEP_SECONDS` and at most twice that.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from raffle.adapters.redis_commands import RedisCommands
from raffle.adapters.redis_pipeline import LuaScript
from raffle.service.ports import Holder, Look

MARK_SECONDS = 300  # a mark's life: bounds a refusal made wrong by what the rule cannot see
CREDIT_SECONDS = 600  # a credit in flight voids marks this long at most (its process died)
KEEP_SECONDS = 86_400  # as long as a draw's Idempotency-Key replays (entrypoints/worker.py)
PRUNE_EVERY_SECONDS = 60.0
MARK_MS, CREDIT_MS, KEEP_MS = MARK_SECONDS * 1000, CREDIT_SECONDS * 1000, KEEP_SECONDS * 1000

REFUSED = Look(refused=True, generation=None)


def _digest(request_key: str | None) -> str:
    """A request key as remembered: a short digest (two keys that collide both go to the
    database, which is only slower)."""
    if request_key is None:
        return ""
    return hashlib.blake2b(request_key.encode(), digest_size=8).hexdigest()


def _period(at: float) -> int:
    return int(at // KEEP_SECONDS)


# A generation only has to differ from every other: a process's own random prefix (drawn
# again in a forked child) and a count, not a CSPRNG draw, a system call, for each look.
_GENERATIONS = itertools.count()
_PROCESS = [secrets.token_hex(8)]


def _new_process() -> None:
    _PROCESS[0] = secrets.token_hex(8)


os.register_at_fork(after_in_child=_new_process)


def _generation() -> str:
    return f"{_PROCESS[0]}{next(_GENERATIONS):x}"


@dataclass(slots=True)
class _Record:
    generation: str
    expires_at: float
    mark: str = ""
    mark_until: float = 0.0
    keys: dict[int, set[str]] = field(default_factory=dict)  # by period
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
        key, now_period = _digest(request_key), _period(at)
        if record.busy(at):
            self._remember(record, key, at)
            return Look(refused=False, generation=None)
        seen = any(key in record.keys.get(p, ()) for p in (now_period, now_period - 1))
        if record.mark == f"{record.generation}|{scope}" and record.mark_until > at and not seen:
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
            period = _period(at)
            record.keys = {p: keys for p, keys in record.keys.items() if p >= period - 1}
            record.keys.setdefault(period, set()).add(key)
            record.expires_at = max(record.expires_at, at + KEEP_SECONDS)

    def _prune(self, at: float) -> None:
        # Now and then, so accounts seen once do not stay.
        if at - self._pruned_at < PRUNE_EVERY_SECONDS:
            return
        self._pruned_at = at
        for holder, record in list(self._records.items()):
            if record.expires_at <= at and not record.busy(at):
                del self._records[holder]


# KEYS: the record, the credits in flight, this period's keys, the last period's. ARGV: now
# (ms), a generation for a new record, the scope, the key's digest ('' without a key), the
# record's life (ms). Returns 1 to refuse, else the generation to mark with ('' while a
# credit is in flight: no mark). The record's fields in one read; the keys looked up only
# when a trusted mark would refuse (a draw with a chance, the common case, needs neither).
_LOOK = LuaScript("""
local record = redis.call('HMGET', KEYS[1], 'gen', 'mark', 'until')
local gen = record[1]
if not gen then
    gen = ARGV[2]
    redis.call('HSET', KEYS[1], 'gen', gen)
    redis.call('PEXPIRE', KEYS[1], ARGV[5])
end
local busy = redis.call('ZCOUNT', KEYS[2], ARGV[1], '+inf') > 0
if not busy and record[2] == gen .. '|' .. ARGV[3] and tonumber(record[3]) > tonumber(ARGV[1])
        and (ARGV[4] == '' or (redis.call('SISMEMBER', KEYS[3], ARGV[4]) == 0
            and redis.call('SISMEMBER', KEYS[4], ARGV[4]) == 0)) then
    return 1
end
if ARGV[4] ~= '' then
    redis.call('SADD', KEYS[3], ARGV[4])
    redis.call('PEXPIRE', KEYS[3], 2 * tonumber(ARGV[5]))
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
    """A hash per account, a sorted set of its credits in flight and a set of keys per
    period, under one hash tag (one Redis Cluster slot); every call is one script, sent
    through the shared round trips."""

    def __init__(self, commands: RedisCommands, *, prefix: str = "raffle:chances:") -> None:
        self._commands = commands
        self._prefix = prefix

    async def look(
        self, holder: Holder, scope: str, request_key: str | None, now: datetime
    ) -> Look:
        key, period = _digest(request_key), _period(now.timestamp())
        args = (_ms(now), _generation(), scope, key, KEEP_MS)
        reply = await self._run(_LOOK, holder, *args, periods=(period, period - 1))
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

    async def _run(
        self, script: LuaScript, holder: Holder, *args: str | int, periods: Sequence[int] = ()
    ) -> Any:
        user_id, activity_id = holder
        record = f"{self._prefix}{{{user_id}:{activity_id}}}"
        keys = [record, record + ":credits", *(f"{record}:keys:{p}" for p in periods)]
        return await self._commands.run(script, keys, args)
