"""Tags on every database (saved, replaced, members, checks under the change's lock, concurrent
changes), and a board that hears another process's membership change through Redis."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from datetime import date

import pytest
from redis.asyncio.cluster import RedisCluster
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.passwords import PasswordHasher
from raffle.adapters.redis_commands import RedisClient
from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.repositories.tags import SqlTagStore
from raffle.adapters.sql.repositories.user_pages import SqlUserPages
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.adapters.switch_news import PolledSwitchNews, RedisSwitchNews
from raffle.adapters.tag_language import RuleEngineLanguage
from raffle.domain.profiles import Profile
from raffle.domain.tags import Tag, TagCycle, TagKind
from raffle.service import tags as use
from raffle.service.audience import TagBoard
from raffle.service.auth import create_user
from raffle.service.ports.tags import StoredTags

TODAY = date(2026, 11, 24)
DEADLINE_SECONDS = 10.0  # how long a test waits for news before failing (not a speed bound)
LANGUAGE = RuleEngineLanguage()
HASHER = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)  # fast tests


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade(database_url)
    engine = create_engine(database_url)
    yield engine
    await engine.dispose()


def _accept(others: Mapping[str, Tag]) -> None:
    return None


async def test_tags_are_saved_replaced_and_deleted_with_their_members(engine: AsyncEngine) -> None:
    store = SqlTagStore(engine)
    assert await store.load() == StoredTags(0, {}, {})
    vip = Tag("vip", TagKind.STATIC, description="会员 VIP")
    assert await store.save(vip, _accept) is True
    condition = 'level in [3, 4] and attrs&["vip"] == true'
    assert await store.save(Tag("rich", TagKind.DYNAMIC, condition), _accept) is True
    assert await store.add_members("vip", ["u1", "u2", "u2", "u3"]) == 3
    assert await store.add_members("vip", ["u3", "u4"]) == 1
    assert await store.remove_members("vip", ["u1", "nobody"]) == 1
    assert await store.members("vip") == {"u2", "u3", "u4"}
    assert await store.save(Tag("vip", TagKind.STATIC, description="VIP"), _accept) is False
    assert await store.members("vip") == {"u2", "u3", "u4"}  # still static: they stay
    stored = await store.load()
    tags, version = stored.tags, stored.version
    assert tags == {"vip": Tag("vip", TagKind.STATIC, "", "VIP"), "rich": tags["rich"]}
    assert tags["rich"].condition == condition
    # each tag's revision: the version of its last change, definition or members
    assert stored.revisions == {"rich": 2, "vip": version}
    assert await store.save(Tag("vip", TagKind.DYNAMIC, "level > 1"), _accept) is False
    assert await store.members("vip") == frozenset()  # dynamic now: the list went
    assert await store.delete("rich", _accept) is True
    assert await store.delete("rich", _accept) is False
    assert set((await store.load()).tags) == {"vip"}
    assert await store.version() > version


async def test_a_large_list_is_added_in_chunks(engine: AsyncEngine) -> None:
    store = SqlTagStore(engine)
    await store.save(Tag("many", TagKind.STATIC), _accept)
    users = [f"user{n}" for n in range(1234)]
    assert await store.add_members("many", users) == 1234
    assert await store.add_members("many", [*users[1000:], "new"]) == 1
    assert len(await store.members("many")) == 1235
    assert await store.remove_members("many", users) == 1234


async def test_a_refused_change_writes_nothing(engine: AsyncEngine) -> None:
    store = SqlTagStore(engine)
    await store.save(Tag("a", TagKind.STATIC), _accept)
    version = await store.version()

    def refuse(others: Mapping[str, Tag]) -> None:
        assert set(others) == {"a"}  # the others, read under the change's lock
        raise TagCycle("no")

    with pytest.raises(TagCycle):
        await store.save(Tag("b", TagKind.DYNAMIC, 'tags["a"]'), refuse)
    with pytest.raises(TagCycle):
        await store.delete("a", lambda others: refuse({"a": Tag("a", TagKind.STATIC)}))
    assert await store.version() == version
    assert set((await store.load()).tags) == {"a"}


async def test_concurrent_rings_are_refused_for_one_of_them(engine: AsyncEngine) -> None:
    """Two processes saving the two halves of a ring at once: the checks run in turn, under
    the version row's lock, so the second sees the first and refuses."""
    board = TagBoard(SqlTagStore(engine), PolledSwitchNews(), LANGUAGE)
    await use.save_tag(Tag("x", TagKind.DYNAMIC, "level > 1"), board)
    await use.save_tag(Tag("y", TagKind.DYNAMIC, "level > 2"), board)
    for _ in range(5):
        results = await asyncio.gather(
            use.save_tag(Tag("x", TagKind.DYNAMIC, 'tags["y"]'), board),
            use.save_tag(Tag("y", TagKind.DYNAMIC, 'tags["x"]'), board),
            return_exceptions=True,
        )
        assert sum(isinstance(r, TagCycle) for r in results) == 1, results
        await use.save_tag(Tag("x", TagKind.DYNAMIC, "level > 1"), board)
        await use.save_tag(Tag("y", TagKind.DYNAMIC, "level > 2"), board)


async def test_hundreds_of_concurrent_member_changes_lose_none(engine: AsyncEngine) -> None:
    store = SqlTagStore(engine)
    await store.save(Tag("crowd", TagKind.STATIC), _accept)
    added = await asyncio.gather(
        *(store.add_members("crowd", [f"u{n}", f"u{n + 1}"]) for n in range(300))
    )
    assert sum(added) == 301  # u0..u300, each counted new once
    assert len(await store.members("crowd")) == 301


async def _until(check: Callable[[], object], what: str) -> None:
    deadline = asyncio.get_running_loop().time() + DEADLINE_SECONDS
    while not await check():  # type: ignore[misc]
        assert asyncio.get_running_loop().time() < deadline, f"never saw {what}"
        await asyncio.sleep(0.02)


async def test_a_board_hears_another_process_change_a_member_list_through_redis(
    engine: AsyncEngine, redis: RedisClient
) -> None:
    channel = f"test:{uuid.uuid4().hex}"
    # Looks of its own only every minute: what it hears comes through the channel.
    listening = TagBoard(
        SqlTagStore(engine), RedisSwitchNews(redis, channel=channel, check_every=60), LANGUAGE
    )
    changing = TagBoard(SqlTagStore(engine), RedisSwitchNews(redis, channel=channel), LANGUAGE)
    await use.save_tag(Tag("vip", TagKind.STATIC), changing)
    await use.save_tag(Tag("vip_or_old", TagKind.DYNAMIC, 'tags["vip"] or age > 80'), changing)
    ann = Profile("ann", birth_date=date(1990, 1, 1))
    watching = asyncio.create_task(listening.watch())
    try:
        await listening.refresh()
        assert not await listening.holds("vip_or_old", ann, TODAY)
        await _subscribed(redis, channel)
        await use.add_members("vip", ["ann"], changing)

        async def ann_is_in() -> bool:
            return await listening.holds("vip_or_old", ann, TODAY)

        await _until(ann_is_in, "ann added")
        await use.remove_members("vip", ["ann"], changing)

        async def ann_is_out() -> bool:
            return not await listening.holds("vip", ann, TODAY)

        await _until(ann_is_out, "ann removed")
    finally:
        watching.cancel()


async def _subscribed(redis: RedisClient, channel: str) -> None:
    deadline = asyncio.get_running_loop().time() + DEADLINE_SECONDS
    while True:
        if isinstance(redis, RedisCluster):
            answer = await redis.pubsub_numsub(channel, target_nodes=RedisCluster.ALL_NODES)
        else:
            answer = await redis.pubsub_numsub(channel)
        if int(answer[0][1]) >= 1:
            return
        assert asyncio.get_running_loop().time() < deadline, "never subscribed"
        await asyncio.sleep(0.02)


async def test_accounts_are_scanned_as_empty_profiles_a_page_at_a_time(
    engine: AsyncEngine,
) -> None:
    names = ["zoe", "ann", "Bob", "cyd", "ann2"]
    for name in names:
        await create_user(name, "correct horse battery", False, SqlUnitOfWork(engine), HASHER)
    pages = SqlUserPages(engine)
    first = await pages.page(None, 2)
    assert all(p == Profile(p.user_id) for p in first)  # nothing known but the id
    seen, after = [p.user_id for p in first], first[-1].user_id
    while page := await pages.page(after, 2):
        seen += [p.user_id for p in page]
        after = page[-1].user_id
    assert sorted(seen) == sorted(names)
    assert len(set(seen)) == len(names)  # each once, in the database's order
