"""Deny lists on every database (entries, import, pages, lifting, rules, the version), a board
that hears another process's change through Redis, and automatic blocking counted in Redis
under hundreds of events in flight."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta

import pytest
from redis.asyncio.cluster import RedisCluster
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.phones import PhoneBook
from raffle.adapters.rate_limits import MemoryRateLimiter, RedisRateLimiter
from raffle.adapters.redis_commands import RedisClient, RedisCommands
from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.repositories.deny import SqlDenyStore
from raffle.adapters.sql.unit_of_work import create_engine
from raffle.adapters.switch_news import PolledSwitchNews, RedisSwitchNews
from raffle.domain.blocking import BlockEvent, BlockRule, BlockSubject
from raffle.domain.deny import DenyEntry, DenyKind, Evidence
from raffle.service import block_rules, deny_lists
from raffle.service.audit import deny_added, deny_lifted
from raffle.service.blocking import Blocking
from raffle.service.deny_board import DenyBoard
from raffle.service.deny_lists import NewEntry
from raffle.service.ports.deny import DenyQuery
from tests.integration.raffles import SettableClock

NOW = datetime(2026, 11, 25, 8, tzinfo=UTC)
DEADLINE_SECONDS = 10.0  # how long a test waits for news before failing (not a speed bound)
PHONES = PhoneBook("CN")


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade(database_url)
    engine = create_engine(database_url)
    yield engine
    await engine.dispose()


def _entry(kind: DenyKind, value: str, expires: datetime | None = None) -> DenyEntry:
    return DenyEntry(kind, value, "why", "root", NOW, expires)


async def test_entries_are_stored_paged_loaded_in_force_and_lifted(engine: AsyncEngine) -> None:
    store = SqlDenyStore(engine)
    assert await store.version() == 0
    evidence = Evidence(3, "refused_draw", 31, 1, NOW - timedelta(seconds=40), NOW)
    automatic = DenyEntry(
        DenyKind.USER, "mallory", "auto", "rule 3", NOW, NOW + timedelta(hours=1), evidence
    )
    stored = await store.add(automatic, deny_added)
    assert stored.id > 0
    assert stored.evidence == evidence
    expired = await store.add(_entry(DenyKind.SN, "S1", NOW - timedelta(seconds=1)), deny_added)
    ranges = [f"10.{i // 256}.{i % 256}.0/24" for i in range(2500)]
    assert await store.add_many([_entry(DenyKind.IP, r) for r in ranges], deny_added) == 2500
    assert await store.version() == 3

    loaded = await store.load(NOW)
    assert loaded.version == 3
    assert len(loaded.entries) == 2501
    assert stored in loaded.entries
    assert expired not in loaded.entries

    newest = await store.page(DenyQuery(kind=DenyKind.IP), None, 100)
    assert len(newest) == 100
    assert newest[0].id > newest[-1].id
    older = await store.page(DenyQuery(kind=DenyKind.IP), newest[-1].id, 100)
    assert older[0].id < newest[-1].id
    assert await store.page(DenyQuery(automatic=True), None, 10) == [stored]
    in_force = DenyQuery(kind=DenyKind.SN, in_force_at=NOW)
    assert await store.page(in_force, None, 10) == []
    prefixed = await store.page(DenyQuery(value="10.0.1"), None, 200)
    assert {e.value for e in prefixed} == {r for r in ranges if r.startswith("10.0.1")}
    percent = await store.page(DenyQuery(value="10%"), None, 10)
    assert percent == []  # a wildcard typed is a character, not a pattern

    lifted = deny_lifted("root", NOW)
    assert await store.lift(stored.id, lifted) == stored
    assert await store.lift(stored.id, lifted) is None
    assert await store.version() == 5


async def test_rules_are_added_and_deleted(engine: AsyncEngine) -> None:
    store = SqlDenyStore(engine)
    rule = BlockRule(BlockEvent.FAILED_LOGIN, BlockSubject.IP, 5, 10, 60, "root", NOW)
    stored = await store.add_rule(rule)
    assert stored.id > 0
    assert (await store.load(NOW)).rules == [stored]
    assert await store.delete_rule(stored.id) is True
    assert await store.delete_rule(stored.id) is False
    assert (await store.load(NOW)).rules == []


async def test_hundreds_of_concurrent_additions_lose_none(engine: AsyncEngine) -> None:
    store = SqlDenyStore(engine)
    await asyncio.gather(
        *(store.add(_entry(DenyKind.USER, f"u{i}"), deny_added) for i in range(300))
    )
    loaded = await store.load(NOW)
    assert loaded.version == 300
    assert {e.value for e in loaded.entries} == {f"u{i}" for i in range(300)}


async def test_a_board_hears_another_process_deny_and_lift_through_redis(
    engine: AsyncEngine, redis: RedisClient
) -> None:
    channel = f"test:{uuid.uuid4().hex}"
    clock = SettableClock(NOW)
    # Looks of its own only every minute: what it hears comes through the channel.
    listening = DenyBoard(
        SqlDenyStore(engine), RedisSwitchNews(redis, channel=channel, check_every=60), clock
    )
    changing = DenyBoard(SqlDenyStore(engine), RedisSwitchNews(redis, channel=channel), clock)
    counter = MemoryRateLimiter(clock)
    watching = asyncio.create_task(listening.watch())
    try:
        await listening.refresh()
        await _subscribed(redis, channel)
        range_ = NewEntry(DenyKind.IP, "2001:db8::/48", "abuse")
        entry = await deny_lists.add_entry(range_, "root", changing, PHONES)
        await _until(lambda: _denies(listening, "2001:db8:0:ffff::1"), "the range denied")
        await deny_lists.lift(entry.id, changing, Blocking(changing, counter), by="root")
        await _until(lambda: _allows(listening, "2001:db8::1"), "the range lifted")
    finally:
        watching.cancel()


async def test_hundreds_of_refusals_in_flight_make_one_automatic_entry(
    engine: AsyncEngine, redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> None:
    clock = SettableClock(NOW)
    board = DenyBoard(SqlDenyStore(engine), PolledSwitchNews(), clock)
    blocking = Blocking(board, RedisRateLimiter(redis, prefix=prefix, commands=redis_commands))
    rule = await block_rules.add_rule(
        BlockEvent.REFUSED_DRAW,
        BlockSubject.USER,
        threshold=30,
        window_minutes=1,
        block_minutes=60,
        actor="root",
        board=board,
    )
    await asyncio.gather(
        *(
            blocking.noted(BlockEvent.REFUSED_DRAW, user_id="mallory", ip="198.51.100.7")
            for _ in range(300)
        )
    )
    # Another event counts for no rule: nothing.
    await blocking.noted(BlockEvent.FAILED_LOGIN, user_id="alice", ip="198.51.100.7")

    (entry,) = await board.store.page(DenyQuery(), None, 10)
    assert (entry.kind, entry.value, entry.added_by) == (
        DenyKind.USER,
        "mallory",
        f"rule {rule.id}",
    )
    assert entry.expires_at == NOW + timedelta(minutes=60)
    assert entry.evidence is not None
    assert entry.evidence.rule_id == rule.id
    assert 31 <= entry.evidence.count <= 300
    assert NOW - timedelta(minutes=1) <= entry.evidence.first_at <= entry.evidence.last_at == NOW
    assert board.denies(user="mallory")

    # Lifted, its count starts again: 30 more are within the rule, the 31st denies again.
    await deny_lists.lift(entry.id, board, blocking, by="root")
    assert not board.denies(user="mallory")
    for _ in range(30):
        await blocking.noted(BlockEvent.REFUSED_DRAW, user_id="mallory", ip=None)
    assert not board.denies(user="mallory")
    await blocking.noted(BlockEvent.REFUSED_DRAW, user_id="mallory", ip=None)
    assert board.denies(user="mallory")


async def _denies(board: DenyBoard, address: str) -> bool:
    return board.denies(ip=address)


async def _allows(board: DenyBoard, address: str) -> bool:
    return not board.denies(ip=address)


async def _until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = asyncio.get_running_loop().time() + DEADLINE_SECONDS
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, f"never saw {what}"
        await asyncio.sleep(0.02)


async def _subscribed(redis: RedisClient, channel: str) -> None:
    deadline = asyncio.get_running_loop().time() + DEADLINE_SECONDS
    while True:
        if isinstance(redis, RedisCluster):
            answer = await redis.pubsub_numsub(channel, target_nodes=RedisCluster.ALL_NODES)
        else:
            answer = await redis.pubsub_numsub(channel)
        if any(count for _, count in answer):
            return
        assert asyncio.get_running_loop().time() < deadline, "never subscribed"
        await asyncio.sleep(0.02)
