"""SQL storage of activities, quota packs, SKUs and users, on every database."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.activity import Activity, ActivityState
from raffle.domain.quota import QuotaPack, Sku
from raffle.domain.users import User
from raffle.service.ports import UnitOfWork

BIG_ID = 2**40  # beyond a 32-bit INTEGER: ids are BIGINT everywhere
SHANGHAI = timezone(timedelta(hours=8))
SPRING = Activity(
    id=BIG_ID,
    name="新年抽奖大转盘",
    strategy_id=7,
    begin_at=datetime(2026, 2, 16, 23, 59, 59, 123456, tzinfo=UTC),
    end_at=datetime(2026, 3, 1, 8, 0, 0, 999999, tzinfo=SHANGHAI),  # 00:00:00.999999 UTC
    time_zone="Asia/Shanghai",
    description="春节活动",
    welcome_pack=3,
)
SUMMER = Activity(
    id=5,
    name="Summer",
    strategy_id=8,
    begin_at=datetime(2026, 7, 1, tzinfo=UTC),
    end_at=datetime(2026, 8, 1, tzinfo=UTC),
    time_zone="Europe/Paris",
    state=ActivityState.APPROVED,
)
HOLD_LOCK_SECONDS = 0.005  # each winner keeps its row lock a moment, so the others queue


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade(database_url)
    engine = create_engine(database_url)
    yield engine
    await engine.dispose()


async def _save(engine: AsyncEngine, *items: Activity | QuotaPack | Sku) -> None:
    uow: UnitOfWork = SqlUnitOfWork(engine)  # the port, as the services see it
    async with uow:
        for item in items:
            if isinstance(item, Activity):
                await uow.activities.save(item)
            elif isinstance(item, QuotaPack):
                await uow.packs.save(item)
            else:
                await uow.skus.save(item)
        await uow.commit()


async def _activity(engine: AsyncEngine, activity_id: int) -> Activity | None:
    async with SqlUnitOfWork(engine) as uow:
        return await uow.activities.get(activity_id)


async def _cas(
    engine: AsyncEngine, activity_id: int, expected: ActivityState, new: ActivityState
) -> bool:
    async with SqlUnitOfWork(engine) as uow:
        moved = await uow.activities.compare_and_set(activity_id, expected, new)
        await asyncio.sleep(HOLD_LOCK_SECONDS)
        await uow.commit()
    return moved


async def _take(engine: AsyncEngine, sku: int) -> bool:
    async with SqlUnitOfWork(engine) as uow:
        taken = await uow.skus.take(sku)
        await asyncio.sleep(HOLD_LOCK_SECONDS)
        await uow.commit()
    return taken


async def _stock_left(engine: AsyncEngine, sku: int) -> int:
    async with SqlUnitOfWork(engine) as uow:
        return await uow.skus.stock_left(sku)


async def test_an_activity_comes_back_equal_in_utc_to_the_microsecond(
    engine: AsyncEngine,
) -> None:
    await _save(engine, SPRING, SUMMER)

    stored = await _activity(engine, BIG_ID)

    assert stored == SPRING
    assert stored is not None
    assert stored.name == "新年抽奖大转盘"
    assert stored.begin_at.tzinfo is UTC
    assert stored.begin_at.microsecond == 123456
    assert stored.end_at == datetime(2026, 3, 1, 0, 0, 0, 999999, tzinfo=UTC)
    assert await _activity(engine, 6) is None


async def test_all_and_using_strategy_are_ordered_by_id(engine: AsyncEngine) -> None:
    also_seven = replace(SUMMER, id=6, strategy_id=7)
    await _save(engine, SPRING, SUMMER, also_seven)

    async with SqlUnitOfWork(engine) as uow:
        assert await uow.activities.all() == [SUMMER, also_seven, SPRING]
        assert await uow.activities.using_strategy(7) == [also_seven, SPRING]
        assert await uow.activities.using_strategy(9) == []


async def test_saving_again_replaces_everything_but_the_state(engine: AsyncEngine) -> None:
    await _save(engine, SPRING, SUMMER)
    assert await _cas(engine, SPRING.id, ActivityState.EDIT, ActivityState.SUBMITTED)
    reloaded = replace(SPRING, name="改名", strategy_id=9, welcome_pack=None, time_zone="UTC")

    await _save(engine, reloaded, replace(SUMMER, state=ActivityState.EDIT))

    assert await _activity(engine, SPRING.id) == replace(reloaded, state=ActivityState.SUBMITTED)
    assert await _activity(engine, SUMMER.id) == SUMMER  # a new row took its own state


async def test_compare_and_set_moves_the_state_once(engine: AsyncEngine) -> None:
    await _save(engine, SUMMER)

    assert await _cas(engine, SUMMER.id, ActivityState.APPROVED, ActivityState.RUNNING)
    assert not await _cas(engine, SUMMER.id, ActivityState.APPROVED, ActivityState.RUNNING)
    assert not await _cas(engine, 404, ActivityState.EDIT, ActivityState.SUBMITTED)
    stored = await _activity(engine, SUMMER.id)
    assert stored is not None
    assert stored.state is ActivityState.RUNNING


async def test_compare_and_set_counts_a_matched_row_that_did_not_change(
    engine: AsyncEngine,
) -> None:
    # MySQL reports changed rows unless the client asks for matched ones.
    await _save(engine, SUMMER)

    assert await _cas(engine, SUMMER.id, ActivityState.APPROVED, ActivityState.APPROVED)


async def test_of_concurrent_compare_and_sets_exactly_one_wins(engine: AsyncEngine) -> None:
    await _save(engine, SUMMER)

    results = await asyncio.gather(
        *(_cas(engine, SUMMER.id, ActivityState.APPROVED, ActivityState.RUNNING) for _ in range(50))
    )

    assert results.count(True) == 1
    stored = await _activity(engine, SUMMER.id)
    assert stored is not None
    assert stored.state is ActivityState.RUNNING


async def test_packs_round_trip_and_save_replaces(engine: AsyncEngine) -> None:
    await _save(engine, QuotaPack(BIG_ID, 10, 2, 5), QuotaPack(2, 1, 1, 1))
    await _save(engine, QuotaPack(2, 3, 0, 30))

    async with SqlUnitOfWork(engine) as uow:
        assert await uow.packs.get(BIG_ID) == QuotaPack(BIG_ID, 10, 2, 5)
        assert await uow.packs.get(2) == QuotaPack(2, 3, 0, 30)
        assert await uow.packs.get(3) is None


async def test_skus_round_trip_by_activity(engine: AsyncEngine) -> None:
    skus = [Sku(BIG_ID, 1, 2, 100, price_points=50), Sku(9, 1, 3, 0), Sku(10, 2, 3, 5)]
    await _save(engine, *skus)

    async with SqlUnitOfWork(engine) as uow:
        assert await uow.skus.get(BIG_ID) == skus[0]
        assert await uow.skus.get(11) is None
        assert await uow.skus.for_activity(1) == [skus[1], skus[0]]
        assert await uow.skus.for_activity(3) == []
        assert await uow.skus.stock_left(BIG_ID) == 100
        assert await uow.skus.stock_left(11) == 0


async def test_taking_stops_at_zero(engine: AsyncEngine) -> None:
    await _save(engine, Sku(1, 1, 1, stock=3))

    taken = [await _take(engine, 1) for _ in range(4)]

    assert taken == [True, True, True, False]
    assert await _stock_left(engine, 1) == 0
    assert not await _take(engine, 2)  # an unknown SKU has nothing to take


async def test_of_concurrent_takes_exactly_the_stock_succeed(engine: AsyncEngine) -> None:
    await _save(engine, Sku(1, 1, 1, stock=10))

    taken = await asyncio.gather(*(_take(engine, 1) for _ in range(100)))

    assert taken.count(True) == 10
    assert await _stock_left(engine, 1) == 0


async def test_give_back_never_exceeds_the_stock(engine: AsyncEngine) -> None:
    await _save(engine, Sku(1, 1, 1, stock=2))
    assert await _take(engine, 1)

    async with SqlUnitOfWork(engine) as uow:
        await uow.skus.give_back(1)
        await uow.skus.give_back(1)
        await uow.skus.give_back(2)
        await uow.commit()

    assert await _stock_left(engine, 1) == 2


async def test_saving_a_sku_again_keeps_what_was_sold(engine: AsyncEngine) -> None:
    await _save(engine, Sku(1, 1, 1, stock=10), Sku(2, 1, 1, stock=10))
    for _ in range(4):
        assert await _take(engine, 1)
        assert await _take(engine, 2)

    bigger, smaller = Sku(1, 2, 3, stock=15, price_points=7), Sku(2, 1, 1, stock=3)
    await _save(engine, bigger, smaller)

    async with SqlUnitOfWork(engine) as uow:
        assert await uow.skus.get(1) == bigger
        assert await uow.skus.stock_left(1) == 11  # 15 - 4 sold
        assert await uow.skus.get(2) == smaller
        assert await uow.skus.stock_left(2) == 0  # 4 sold of 3: none left, not -1


async def test_a_user_is_added_once(engine: AsyncEngine) -> None:
    alice = User("alice", "$argon2id$v=19$hash", is_admin=True)

    async with SqlUnitOfWork(engine) as uow:
        assert await uow.users.add(alice)
        assert not await uow.users.add(User("alice", "other"))
        # The refused insert left the transaction usable (PostgreSQL aborts on an error).
        assert await uow.users.add(User("bob", "hash"))
        await uow.commit()

    async with SqlUnitOfWork(engine) as uow:
        assert await uow.users.get("alice") == alice
        assert await uow.users.get("bob") == User("bob", "hash")
        assert await uow.users.get("carol") is None
        assert not await uow.users.add(User("bob", "again"))


async def test_a_user_id_too_long_for_its_column_is_refused(engine: AsyncEngine) -> None:
    # MySQL's INSERT IGNORE would store it cut short.
    async with SqlUnitOfWork(engine) as uow:
        with pytest.raises(ValueError, match="at most 32"):
            await uow.users.add(User("x" * 33, "hash"))
        assert await uow.users.get("x" * 32) is None
