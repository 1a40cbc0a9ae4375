"""SQL storage of awards and strategies: migrations, round trips, replacement, transactions."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Connection, MetaData, func, inspect, select, text
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import QueuePool

from raffle.adapters.sql.migrate import downgrade, upgrade
from raffle.adapters.sql.tables import flash_sales as flash_tables
from raffle.adapters.sql.tables import points as points_tables
from raffle.adapters.sql.tables import prizes as prize_tables
from raffle.adapters.sql.tables.audit import define_shard as define_audit
from raffle.adapters.sql.tables.config import (
    NAMING_CONVENTION,
    metadata,
    strategy_prize,
    strategy_rule,
)
from raffle.adapters.sql.tables.delivery import define as define_delivery
from raffle.adapters.sql.tables.participation import define as define_participation
from raffle.adapters.sql.tables.payments import define as define_payments
from raffle.adapters.sql.tables.prize_claims import define as define_prize_claims
from raffle.adapters.sql.tables.shard import define
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.awards import Award, AwardKind
from raffle.domain.errors import InvalidConfig
from raffle.domain.strategy import Exhaustion, Fallback, Strategy, StrategyPrize
from raffle.service.ports import UnitOfWork

TABLES = {
    "award", "strategy", "strategy_prize", "strategy_rule", "campaign_load", "route_tree",
    "participation_policy", "person_cap", "participation_000",
}  # fmt: skip
BIG_ID = 2**40  # beyond a 32-bit INTEGER: ids are BIGINT everywhere

FULL = Strategy(
    id=BIG_ID,
    prizes=(
        StrategyPrize(101, Decimal("0.30"), stock=None, sort=1),
        StrategyPrize(102, Decimal("0.0001"), stock=10, sort=2, rules=(("lock", "3"),)),
        StrategyPrize(103, Decimal("0.000001"), stock=0, sort=3, rules=(("lock", "60"),)),
        StrategyPrize(104, Decimal("0"), stock=2_000_000_000, sort=4),
        StrategyPrize(100, Decimal("0.5"), sort=0),  # `sort` is the display order only
    ),
    fallback=Fallback(100, points=(1, 100)),
    rules=(("listed", "104:user001,user002"), ("weight", "60:102,103 200:101")),
    exhaustion=Exhaustion.REDISTRIBUTE,
    description="新年大转盘",
)
PLAIN = Strategy(
    id=2,
    prizes=(StrategyPrize(100, Decimal(1)),),
    fallback=Fallback(100),
    exhaustion=Exhaustion.FALLBACK,
)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade(database_url)
    engine = create_engine(database_url)
    yield engine
    await engine.dispose()


async def _table_names(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            names = await connection.run_sync(lambda c: inspect(c).get_table_names())
    finally:
        await engine.dispose()
    return set(names)


async def _save(engine: AsyncEngine, *strategies: Strategy) -> None:
    uow: UnitOfWork = SqlUnitOfWork(engine)  # the port, as the services see it
    async with uow:
        for strategy in strategies:
            await uow.strategies.save(strategy)
        await uow.commit()


async def _get(engine: AsyncEngine, strategy_id: int) -> Strategy | None:
    async with SqlUnitOfWork(engine) as uow:
        return await uow.strategies.get(strategy_id)


async def _save_then_fail(engine: AsyncEngine, strategy: Strategy) -> None:
    async with SqlUnitOfWork(engine) as uow:
        await uow.strategies.save(strategy)
        raise RuntimeError("boom")


async def _row_counts(engine: AsyncEngine, strategy_id: int) -> list[int | None]:
    async with engine.connect() as connection:
        return [
            await connection.scalar(
                select(func.count()).select_from(t).where(t.c.strategy_id == strategy_id)
            )
            for t in (strategy_prize, strategy_rule)
        ]


async def test_migrations_create_the_tables_and_downgrade_removes_them(database_url: str) -> None:
    await upgrade(database_url)
    assert await _table_names(database_url) >= TABLES

    await downgrade(database_url, "base")
    assert not TABLES & await _table_names(database_url)


async def test_the_migrated_schema_matches_the_tables_module(engine: AsyncEngine) -> None:
    def differences(connection: Connection) -> list[object]:
        expected = MetaData(naming_convention=NAMING_CONVENTION)
        assert flash_tables.flash_sale.metadata is metadata  # compared with the rest
        for table in metadata.tables.values():
            table.to_metadata(expected)
        define(0, expected)  # one shard table index by default
        points_tables.define(0, expected)
        prize_tables.define(0, expected)  # (importing it put code_pool in `metadata`)
        define_delivery(0, expected)
        define_participation(0, expected)
        define_prize_claims(0, expected)
        define_payments(0, expected)
        define_audit(0, expected)
        return list(compare_metadata(MigrationContext.configure(connection), expected))

    async with engine.connect() as connection:
        assert await connection.run_sync(differences) == []


async def test_a_strategy_comes_back_equal_to_what_was_saved(engine: AsyncEngine) -> None:
    await _save(engine, FULL, PLAIN)

    full, plain = await _get(engine, FULL.id), await _get(engine, PLAIN.id)

    assert full == FULL
    assert plain == PLAIN
    assert full is not None
    assert [p.weight for p in full.prizes] == [300_000, 100, 1, 0, 500_000]
    assert [p.award_id for p in full.prizes] == [101, 102, 103, 104, 100]  # saved order
    assert full.rules[0][0] == "listed"
    assert full.rules[1][0] == "weight"


async def test_a_rule_stored_under_its_old_name_reads_under_the_new(engine: AsyncEngine) -> None:
    await _save(engine, FULL)
    async with engine.begin() as connection:  # as a strategy saved before the rename left it
        await connection.execute(
            strategy_rule.update()
            .where(strategy_rule.c.strategy_id == FULL.id, strategy_rule.c.rule_model == "listed")
            .values(rule_model="blacklist")
        )
    stored = await _get(engine, FULL.id)
    assert stored == FULL
    assert stored.rules[0] == ("listed", "104:user001,user002")


async def test_saving_again_replaces_prizes_and_rules(engine: AsyncEngine) -> None:
    await _save(engine, FULL, PLAIN)
    smaller = Strategy(
        id=FULL.id,
        prizes=(StrategyPrize(105, Decimal("0.25"), stock=7, rules=(("lock", "1"),)),),
        fallback=Fallback(106),
        description="改版",
    )

    await _save(engine, smaller)

    assert await _get(engine, FULL.id) == smaller
    assert await _row_counts(engine, FULL.id) == [1, 2]  # the prize; its lock and the luck rule
    assert await _get(engine, PLAIN.id) == PLAIN


async def test_concurrent_saves_of_one_strategy_do_not_mix(engine: AsyncEngine) -> None:
    first = Strategy(
        7, (StrategyPrize(101, Decimal("0.1")),), Fallback(100), (("weight", "5:101"),)
    )
    second = Strategy(
        7, (StrategyPrize(102, Decimal("0.2")), StrategyPrize(103, Decimal("0.3"))), Fallback(100)
    )

    async with SqlUnitOfWork(engine) as uow:
        await uow.strategies.save(first)
        waiting = asyncio.create_task(_save(engine, second))
        await asyncio.sleep(0.3)  # the second save is now blocked on the first's row lock
        assert not waiting.done()
        await uow.commit()
    await waiting

    assert await _get(engine, 7) == second
    assert await _row_counts(engine, 7) == [2, 1]


async def test_awards_round_trip_and_save_replaces(engine: AsyncEngine) -> None:
    awards = [
        Award(BIG_ID, AwardKind.RANDOM_POINTS, "随机积分", "1,100"),
        Award(100, AwardKind.THANKS, "谢谢参与"),
        Award(102, AwardKind.POINTS, "50 points", "50"),
    ]
    async with SqlUnitOfWork(engine) as uow:
        for award in awards:
            await uow.awards.save(award)
        await uow.awards.save(Award(102, AwardKind.COUPON, "Coupon", "pool-a"))
        await uow.commit()

    async with SqlUnitOfWork(engine) as uow:
        stored = await uow.awards.all()

    assert stored == {
        100: awards[1],
        102: Award(102, AwardKind.COUPON, "Coupon", "pool-a"),
        BIG_ID: awards[0],
    }


async def test_leaving_without_commit_keeps_nothing(engine: AsyncEngine) -> None:
    async with SqlUnitOfWork(engine) as uow:
        await uow.awards.save(Award(100, AwardKind.THANKS, "Thanks"))
        await uow.strategies.save(PLAIN)
    with pytest.raises(RuntimeError, match="boom"):
        await _save_then_fail(engine, FULL)

    async with SqlUnitOfWork(engine) as uow:
        assert await uow.strategies.ids() == []
        assert await uow.awards.all() == {}
    pool = engine.sync_engine.pool
    assert isinstance(pool, QueuePool)
    assert pool.checkedout() == 0  # every connection went back, the failed block's too


async def test_ids_are_sorted_and_an_unknown_id_is_none(engine: AsyncEngine) -> None:
    await _save(engine, FULL, PLAIN, Strategy(1, (), Fallback(100)))

    async with SqlUnitOfWork(engine) as uow:
        assert await uow.strategies.ids() == [1, 2, BIG_ID]
        assert await uow.strategies.get(3) is None
        assert await uow.strategies.get(1) == Strategy(1, (), Fallback(100))


async def test_luck_is_reserved_for_the_fallback(engine: AsyncEngine) -> None:
    clash = Strategy(3, (), Fallback(100), rules=(("luck", "101"),))

    with pytest.raises(InvalidConfig, match="luck"):
        await _save(engine, clash)


async def test_sqlite_engine_enforces_foreign_keys_in_wal_mode(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'settings.db'}")
    try:
        async with engine.connect() as connection:
            assert await connection.scalar(text("PRAGMA foreign_keys")) == 1
            assert await connection.scalar(text("PRAGMA journal_mode")) == "wal"
            assert await connection.scalar(text("PRAGMA busy_timeout")) == 5000
    finally:
        await engine.dispose()
