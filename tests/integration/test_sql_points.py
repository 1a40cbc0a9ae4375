"""Points, rebate orders and rebate rules in SQL, on every backend, sharded 1 x 4."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.migrate import downgrade, upgrade
from raffle.adapters.sql.shards import SqlShards
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.points import InsufficientPoints, PointsAccount, PointsKind, PointsOrder
from raffle.domain.rebates import RebateOrder, RebateRule
from raffle.service.ports import Shards

T0 = datetime(2026, 11, 21, 8, 30, 0, 123456, tzinfo=UTC)
USERS = ["xiaofuge", "liergou", "user001", "用户42"]  # spread over several shard tables


def _order(user: str, n: int, kind: PointsKind, amount: int, no: str | None = None) -> PointsOrder:
    at = T0 + timedelta(seconds=n)
    order_id = (
        f"{int(at.timestamp() * 1000):012x}{USERS.index(user) if user in USERS else 9:06x}{n:06x}"
    )
    return PointsOrder(order_id, user, kind, amount, no or f"no-{n}", "test", at)


async def _add(shards: Shards, order: PointsOrder) -> bool:
    async with shards.for_user(order.user_id) as uow:
        applied = await uow.points.add(order)
        await uow.commit()
    return applied


async def _account(shards: Shards, user: str) -> PointsAccount | None:
    async with shards.for_user(user) as uow:
        return await uow.points.account(user)


async def test_earn_and_spend_apply_once_per_business_number(shards: Shards) -> None:
    for user in USERS:
        assert await _add(shards, _order(user, 1, PointsKind.EARN, 100))
        assert not await _add(shards, _order(user, 2, PointsKind.EARN, 100, no="no-1"))
        assert await _add(shards, _order(user, 3, PointsKind.SPEND, 30))
        assert not await _add(shards, _order(user, 4, PointsKind.SPEND, 30, no="no-3"))
        assert await _account(shards, user) == PointsAccount(user, 100, 70)


async def test_a_spend_beyond_the_balance_changes_nothing_and_leaves_the_transaction_usable(
    shards: Shards,
) -> None:
    await _add(shards, _order("xiaofuge", 1, PointsKind.EARN, 10))
    async with shards.for_user("xiaofuge") as uow:
        with pytest.raises(InsufficientPoints):
            await uow.points.add(_order("xiaofuge", 2, PointsKind.SPEND, 11))
        assert await uow.points.by_business_no("xiaofuge", "no-2") is None
        assert await uow.points.add(_order("xiaofuge", 3, PointsKind.EARN, 1))  # goes on
        await uow.commit()
    assert await _account(shards, "xiaofuge") == PointsAccount("xiaofuge", 11, 11)
    with pytest.raises(InsufficientPoints):
        await _add(shards, _order("nobody", 1, PointsKind.SPEND, 1))  # no account at all
    assert await _account(shards, "nobody") is None


async def test_concurrent_spends_never_take_the_balance_below_zero(shards: Shards) -> None:
    await _add(shards, _order("liergou", 0, PointsKind.EARN, 50))

    async def spend(n: int) -> bool:
        try:
            return await _add(shards, _order("liergou", n, PointsKind.SPEND, 7))
        except InsufficientPoints:
            return False

    results = await asyncio.gather(*(spend(n) for n in range(1, 101)))
    assert sum(results) == 7  # 7 x 7 = 49 of 50
    assert await _account(shards, "liergou") == PointsAccount("liergou", 50, 1)


async def test_history_pages_newest_first(shards: Shards) -> None:
    for n in range(1, 6):
        await _add(shards, _order("user001", n, PointsKind.EARN, n))
    await _add(shards, _order("liergou", 9, PointsKind.EARN, 9))
    async with shards.for_user("user001") as uow:
        first = await uow.points.history("user001", None, 3)
        rest = await uow.points.history("user001", first[-1].order_id, 3)
    assert [o.amount for o in first] == [5, 4, 3]
    assert [o.amount for o in rest] == [2, 1]
    assert first[0] == _order("user001", 5, PointsKind.EARN, 5)


def _rebate(user: str, key: str, n: int = 0) -> RebateOrder:
    return RebateOrder(f"r{n:031d}", user, 7, "sign_in", key, 31, 10, T0)


async def test_a_rebate_order_is_unique_per_user_activity_behaviour_and_key(
    shards: Shards,
) -> None:
    for n, key in enumerate(["2026-11-01", "2026-11-02", "2026-11-30", "2026-12-01"]):
        async with shards.for_user("xiaofuge") as uow:
            assert await uow.rebates.add(_rebate("xiaofuge", key, n))
            await uow.commit()
    async with shards.for_user("xiaofuge") as uow:
        assert not await uow.rebates.add(_rebate("xiaofuge", "2026-11-02", 99))
        assert await uow.rebates.get("xiaofuge", 7, "sign_in", "2026-11-02") == _rebate(
            "xiaofuge", "2026-11-02", 1
        )
        keys = await uow.rebates.keys("xiaofuge", 7, "sign_in", "2026-11-01", "2026-11-31")
        assert keys == ["2026-11-01", "2026-11-02", "2026-11-30"]
        assert await uow.rebates.keys("xiaofuge", 8, "sign_in", "2026-11-01", "2026-11-31") == []


async def test_rebate_rules_are_saved_and_replaced(engine: AsyncEngine) -> None:
    rules = [RebateRule(7, "sign_in", 31, 10, "每日签到"), RebateRule(7, "share", None, 5)]
    async with SqlUnitOfWork(engine) as uow:
        for rule in rules:
            await uow.rebate_rules.save(rule)
        await uow.rebate_rules.save(RebateRule(8, "share", points=1))
        await uow.commit()
    async with SqlUnitOfWork(engine) as uow:
        await uow.rebate_rules.save(RebateRule(7, "share", None, 6, enabled=False))
        await uow.commit()
    async with SqlUnitOfWork(engine) as uow:
        assert await uow.rebate_rules.for_activity(7) == [
            RebateRule(7, "share", None, 6, enabled=False),
            rules[0],
        ]


async def test_migration_0003_goes_down_to_0002_and_up_again(database_url: str) -> None:
    await upgrade(database_url, shard_tables=2)
    await downgrade(database_url, "0002", shard_tables=2)
    await upgrade(database_url, shard_tables=2)
    engine = create_engine(database_url)
    try:
        shards = SqlShards([engine], tables=2)
        assert await _add(shards, _order("xiaofuge", 1, PointsKind.EARN, 1))
    finally:
        await engine.dispose()
