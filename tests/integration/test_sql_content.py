"""Paid content on every database: its table made by migration 0021 and removed by its
downgrade, stored and read back whole (long Chinese bodies too), listed by state a page at
a time, state changes as compare-and-set under hundreds of concurrent requests, and a
player's grant read by (user, content)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import inspect
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.migrate import downgrade, upgrade
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.bootstrap import sql_shards
from raffle.domain.content import BODY_MAX, ContentState, ContentText, IllegalContentState
from raffle.domain.fulfilment import AccessGrant
from raffle.service import content as use

NOW = datetime(2026, 11, 25, 9, 30, 0, 123456, tzinfo=UTC)
TEXT = ContentText("抽奖系统 · 第一讲", "概要", "## 正文", "预览", "https://e.com/c.png", 990)
RACERS = 200


class Clock:
    def __init__(self) -> None:
        self.current = NOW

    def now(self) -> datetime:
        return self.current


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade(database_url, shard_tables=2)
    engine = create_engine(database_url)
    yield engine
    await engine.dispose()


async def test_content_is_stored_and_read_back_whole(engine: AsyncEngine) -> None:
    def uow() -> SqlUnitOfWork:
        return SqlUnitOfWork(engine)

    clock = Clock()
    long_text = replace(TEXT, body="长" * BODY_MAX, cover=None, summary="")
    made = await use.create("课程-1", long_text, uow=uow, clock=clock)
    clock.current = NOW + timedelta(minutes=5)
    moved = await use.move("课程-1", ContentState.ON_SALE, uow=uow, clock=clock)

    stored = await use.stored("课程-1", uow)
    assert stored == moved
    assert stored.text == long_text
    assert len(stored.text.body) == BODY_MAX
    assert (stored.created_at, stored.updated_at) == (made.created_at, NOW + timedelta(minutes=5))
    async with uow() as reader:
        assert not await reader.content.add(made)  # the id is taken
        assert await reader.content.get("nope") is None
        assert set(await reader.content.many(["课程-1", "nope"])) == {"课程-1"}
        assert await reader.content.many([]) == {}


async def test_listing_by_state_a_page_at_a_time(engine: AsyncEngine) -> None:
    def uow() -> SqlUnitOfWork:
        return SqlUnitOfWork(engine)

    clock = Clock()
    for content_id in ("a", "b", "c", "d", "e"):
        await use.create(content_id, TEXT, uow=uow, clock=clock)
    for content_id in ("b", "c", "e"):
        await use.move(content_id, ContentState.ON_SALE, uow=uow, clock=clock)

    first = await use.listed(uow, states=use.ON_SALE, limit=2)
    rest = await use.listed(uow, states=use.ON_SALE, after=first[-1].id, limit=2)
    assert [c.id for c in first] == ["b", "c"]
    assert [c.id for c in rest] == ["e"]
    assert [c.id for c in await use.listed(uow)] == ["a", "b", "c", "d", "e"]
    drafts = await use.listed(uow, states=(ContentState.DRAFT,))
    assert [c.id for c in drafts] == ["a", "d"]


async def test_of_hundreds_of_concurrent_state_changes_one_wins(engine: AsyncEngine) -> None:
    def uow() -> SqlUnitOfWork:
        return SqlUnitOfWork(engine)

    clock = Clock()
    await use.create("c1", TEXT, uow=uow, clock=clock)
    await use.move("c1", ContentState.ON_SALE, uow=uow, clock=clock)

    async def take_off() -> str:
        try:
            await use.move("c1", ContentState.OFF_SALE, uow=uow, clock=clock)
        except IllegalContentState as refused:
            return f"refused from {refused.current}"
        return "moved"

    outcomes = Counter(await asyncio.gather(*(take_off() for _ in range(RACERS))))
    assert outcomes == {"moved": 1, "refused from off_sale": RACERS - 1}
    assert (await use.stored("c1", uow)).state is ContentState.OFF_SALE


async def test_an_edit_never_leaves_content_on_sale_free(engine: AsyncEngine) -> None:
    """Edits to price 0 race the move on sale: whichever commits first, the content on sale
    keeps its price."""

    def uow() -> SqlUnitOfWork:
        return SqlUnitOfWork(engine)

    clock = Clock()
    await use.create("c1", TEXT, uow=uow, clock=clock)
    free = replace(TEXT, price_cents=0)

    async def attempt(n: int) -> str:
        try:
            if n == RACERS // 2:
                await use.move("c1", ContentState.ON_SALE, uow=uow, clock=clock)
            else:
                await use.edit("c1", free if n % 2 else TEXT, uow=uow, clock=clock)
        except Exception as refused:
            return type(refused).__name__
        return "done"

    outcomes = Counter(await asyncio.gather(*(attempt(n) for n in range(RACERS))))
    stored = await use.stored("c1", uow)
    assert set(outcomes) <= {"done", "InvalidContent", "IllegalContentState"}
    assert outcomes["done"] >= 1
    # Never on sale for nothing, whichever order they committed in.
    assert (stored.state, stored.text.price_cents == 0) != (ContentState.ON_SALE, True)


async def test_a_grant_is_read_by_user_and_content(engine: AsyncEngine) -> None:
    shards = sql_shards([engine], 2)
    async with shards.for_user("alice") as uow:
        assert await uow.grants.add(AccessGrant("alice", "课程-1", "o1", NOW))
        assert not await uow.grants.add(AccessGrant("alice", "课程-1", "o2", NOW))
        await uow.commit()
    async with shards.for_user("alice") as uow:
        assert await uow.grants.get("alice", "课程-1") == AccessGrant("alice", "课程-1", "o1", NOW)
        assert await uow.grants.get("alice", "课程-2") is None
    async with shards.for_user("bob") as uow:
        assert await uow.grants.get("bob", "课程-1") is None


async def test_the_migration_makes_the_table_and_its_downgrade_removes_it(
    database_url: str,
) -> None:
    async def tables() -> set[str]:
        engine = create_engine(database_url)
        try:
            async with engine.connect() as connection:
                return set(await connection.run_sync(lambda c: inspect(c).get_table_names()))
        finally:
            await engine.dispose()

    await upgrade(database_url, "0021")
    assert "content" in await tables()
    await downgrade(database_url, "0015")
    assert "content" not in await tables()
    assert "route_tree" in await tables()
