"""Chance hints in memory and on a real Redis (one server, and a cluster): the same rule
(service/refusals.py) each."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from raffle.adapters.chance_hints import (
    CREDIT_SECONDS,
    KEEP_SECONDS,
    MARK_SECONDS,
    MemoryChanceHints,
    RedisChanceHints,
)
from raffle.adapters.redis_commands import RedisClient, RedisCommands
from raffle.service.ports import ChanceHints
from tests.integration.redis_clients import REDIS_KINDS, connected

T0 = datetime(2026, 11, 21, 4, tzinfo=UTC)
ALICE, BOB = ("alice", 1), ("bob", 1)
TODAY = "2026-11-21/2026-11/-"


@pytest.fixture(params=["memory", *REDIS_KINDS])
async def hints(request: pytest.FixtureRequest, prefix: str) -> AsyncIterator[ChanceHints]:
    if request.param == "memory":
        yield MemoryChanceHints()
        return
    async with connected(request, request.param) as (_, commands):
        yield RedisChanceHints(commands, prefix=prefix)


async def _marked(hints: ChanceHints, holder: tuple[str, int] = ALICE, at: datetime = T0) -> None:
    look = await hints.look(holder, TODAY, None, at)
    assert look.generation is not None
    await hints.mark(holder, TODAY, look.generation, at)


async def test_a_mark_refuses_its_account_in_its_scope_only(hints: ChanceHints) -> None:
    assert not (await hints.look(ALICE, TODAY, None, T0)).refused  # nothing marked yet
    await _marked(hints)
    assert (await hints.look(ALICE, TODAY, None, T0)).refused
    assert not (await hints.look(ALICE, "2026-11-22/2026-11/-", None, T0)).refused
    assert not (await hints.look(BOB, TODAY, None, T0)).refused


async def test_a_mark_expires_after_its_life(hints: ChanceHints) -> None:
    await _marked(hints)
    assert (await hints.look(ALICE, TODAY, None, T0 + timedelta(seconds=MARK_SECONDS - 1))).refused
    late = T0 + timedelta(seconds=MARK_SECONDS + 1)
    assert not (await hints.look(ALICE, TODAY, None, late)).refused


async def test_a_credit_voids_marks_from_its_beginning_to_after_its_end(
    hints: ChanceHints,
) -> None:
    await _marked(hints)
    await hints.begin_credit([ALICE, BOB], "c-1", T0)
    during = await hints.look(ALICE, TODAY, None, T0)
    assert (during.refused, during.generation) == (False, None)  # nor a mark to write
    await hints.end_credit([ALICE, BOB], "c-1", T0)
    after = await hints.look(ALICE, TODAY, None, T0)
    assert not after.refused
    assert after.generation is not None


async def test_a_mark_read_before_a_credit_is_void_even_if_written_after_it(
    hints: ChanceHints,
) -> None:
    read = await hints.look(ALICE, TODAY, None, T0)
    assert read.generation is not None
    await hints.begin_credit([ALICE], "c-1", T0)
    await hints.end_credit([ALICE], "c-1", T0)
    await hints.mark(ALICE, TODAY, read.generation, T0)
    assert not (await hints.look(ALICE, TODAY, None, T0)).refused


async def test_one_of_two_credits_ending_leaves_the_other_in_flight(hints: ChanceHints) -> None:
    await hints.begin_credit([ALICE], "c-1", T0)
    await hints.begin_credit([ALICE], "c-2", T0)
    await hints.end_credit([ALICE], "c-1", T0)
    await hints.end_credit([ALICE], "c-1", T0)  # a retried end changes nothing more
    assert (await hints.look(ALICE, TODAY, None, T0)).generation is None
    await hints.end_credit([ALICE], "c-2", T0)
    assert (await hints.look(ALICE, TODAY, None, T0)).generation is not None


async def test_a_credit_that_never_ends_expires(hints: ChanceHints) -> None:
    await hints.begin_credit([ALICE], "crashed", T0)
    assert (await hints.look(ALICE, TODAY, None, T0)).generation is None
    later = T0 + timedelta(seconds=CREDIT_SECONDS + 1)
    await _marked(hints, at=later)
    assert (await hints.look(ALICE, TODAY, None, later)).refused


async def test_keys_that_went_to_the_database_are_never_refused(hints: ChanceHints) -> None:
    assert not (await hints.look(ALICE, TODAY, "k-1", T0)).refused  # goes: remembered
    await _marked(hints)
    assert (await hints.look(ALICE, TODAY, "k-2", T0)).refused  # a key never seen
    assert (await hints.look(ALICE, TODAY, "k-2", T0)).refused  # refused: not remembered
    assert not (await hints.look(ALICE, TODAY, "k-1", T0)).refused  # its retry replays


async def test_a_key_is_remembered_a_day_at_least(hints: ChanceHints) -> None:
    assert not (await hints.look(ALICE, TODAY, "k-1", T0)).refused
    later = T0 + timedelta(seconds=KEEP_SECONDS - 1)  # in the next period, or this one
    await _marked(hints, at=later)
    assert not (await hints.look(ALICE, TODAY, "k-1", later)).refused
    assert (await hints.look(ALICE, TODAY, "k-2", later)).refused


async def test_memory_forgets_keys_after_two_days() -> None:
    hints = MemoryChanceHints()
    assert not (await hints.look(ALICE, TODAY, "k-1", T0)).refused
    much_later = T0 + timedelta(seconds=2 * KEEP_SECONDS + 1)
    await _marked(hints, at=much_later)
    assert (await hints.look(ALICE, TODAY, "k-1", much_later)).refused


async def test_concurrent_looks_and_credits_each_get_their_own_answer(
    hints: ChanceHints,
) -> None:
    holders = [(f"user-{n}", 1) for n in range(200)]
    for holder in holders[::2]:
        await _marked(hints, holder)
    await hints.begin_credit(holders[:50], "c-1", T0)
    looks = await asyncio.gather(*(hints.look(h, TODAY, None, T0) for h in holders))
    assert [look.refused for look in looks] == [n % 2 == 0 and n >= 50 for n in range(200)]


async def test_redis_keeps_an_account_a_day_past_its_last_write(
    redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> None:
    hints = RedisChanceHints(redis_commands, prefix=prefix)
    await hints.look(ALICE, TODAY, "k-1", T0)
    await _marked(hints)
    await hints.begin_credit([ALICE], "c-1", T0)
    record = f"{prefix}{{alice:1}}"
    assert 0 < await redis.pttl(record) <= KEEP_SECONDS * 1000
    assert 0 < await redis.pttl(record + ":credits") <= 2 * CREDIT_SECONDS * 1000
    pattern = record.replace("{", "[{]").replace("}", "[}]") + ":keys:*"
    [keys] = [key async for key in redis.scan_iter(pattern)]
    assert 0 < await redis.pttl(keys) <= 2 * KEEP_SECONDS * 1000
    await redis.delete(record, record + ":credits")  # Redis lost its data: no refusal
    assert not (await hints.look(ALICE, TODAY, None, T0)).refused
