"""The console's SQL on every backend: draws per minute across shards, failed deliveries of
one activity, and the stored configuration read back whole (packs, SKUs, rebate rules, free
codes) for the export."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.campaign_file import parse_campaign, read_campaign
from raffle.adapters.campaign_writer import write_campaign
from raffle.adapters.sql.shards import SqlShards
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork
from raffle.domain.campaign import Campaign
from raffle.domain.draws import OrderState, RaffleOrder, Win, WinState
from raffle.service.campaign_export import export_campaign
from raffle.service.campaigns import InvalidCampaign, load_campaign
from raffle.service.delivery import failed_deliveries
from raffle.service.ids import order_id
from tests.e2e.conftest import DEMO
from tests.integration.conftest import SHARD_TABLES

ACTIVITY, OTHER_ACTIVITY, STRATEGY = 100301, 100302, 100006
T0 = datetime(2026, 11, 21, 8, 30, 0, tzinfo=UTC)


async def _draw(shards: SqlShards, user: str, activity: int, at: datetime) -> None:
    async with shards.for_user(user) as uow:
        order = RaffleOrder(order_id(at), user, activity, STRATEGY, 1, OrderState.USED, at)
        await uow.orders.add(order)
        await uow.commit()


async def test_draws_are_counted_per_minute_on_each_shard(engine: AsyncEngine) -> None:
    shards = SqlShards([engine], tables=SHARD_TABLES)
    users = [f"user{n:03d}" for n in range(12)]  # spread over the four tables
    for n, user in enumerate(users):
        await _draw(shards, user, ACTIVITY, T0 + timedelta(seconds=n * 7.5))  # minutes 0 and 1
    await _draw(shards, users[0], ACTIVITY, T0 + timedelta(minutes=5, seconds=59.9))
    await _draw(shards, users[1], ACTIVITY, T0 - timedelta(seconds=0.1))  # before `since`
    await _draw(shards, users[2], OTHER_ACTIVITY, T0)
    total: dict[datetime, int] = {}
    for uow in shards.every():
        async with uow:
            for minute, n in (await uow.orders.per_minute(ACTIVITY, T0)).items():
                total[minute] = total.get(minute, 0) + n
    assert total == {T0: 8, T0 + timedelta(minutes=1): 4, T0 + timedelta(minutes=5): 1}


async def test_failed_deliveries_are_listed_per_activity(engine: AsyncEngine) -> None:
    shards = SqlShards([engine], tables=SHARD_TABLES)
    for n, (user, activity) in enumerate([("user001", ACTIVITY), ("user002", OTHER_ACTIVITY)]):
        win = Win(f"{n:024d}", user, activity, STRATEGY, 101, None, "default", T0, WinState.FAILED)
        async with shards.for_user(user) as uow:
            await uow.wins.add(win)
            await uow.commit()
    assert sorted(w.user_id for w in await failed_deliveries(shards, 10)) == ["user001", "user002"]
    assert [w.user_id for w in await failed_deliveries(shards, 10, ACTIVITY)] == ["user001"]


async def test_the_stored_campaign_reads_back_whole(engine: AsyncEngine) -> None:
    demo = read_campaign(DEMO)
    await load_campaign(demo, SqlUnitOfWork(engine))
    async with SqlUnitOfWork(engine) as uow:
        pool = demo.code_pools[0]
        assert await uow.code_pools.hand_out(pool.name, "o" * 24, "user001", T0)
        await uow.commit()
    exported = await export_campaign(SqlUnitOfWork(engine))
    campaign = exported.campaign
    assert {p.id for p in campaign.packs} == {p.id for p in demo.packs}
    assert set(campaign.skus) == set(demo.skus)
    assert set(campaign.rebates) == set(demo.rebates)
    free = {p.name: p.codes for p in campaign.code_pools}
    assert free[pool.name] == tuple(sorted(pool.codes))[1:]  # the first free code was handed
    assert exported.handed == {pool.name: 1}
    assert parse_campaign(write_campaign(campaign), "export") == campaign


def _coupon_file(strategy: int, stock: int, codes: str = "") -> Campaign:
    text = f"""awards:
  - {{id: 1, kind: thanks, title: Thanks}}
  - {{id: 2, kind: coupon, title: Five off, config: five-off}}
strategies:
  - {{id: {strategy}, fallback: {{award: 1}}, prizes: [{{award: 2, rate: 1, stock: {stock}}}]}}
"""
    return parse_campaign(text + (f"code_pools:\n  five-off: [{codes}]\n" if codes else ""), "f")


async def test_coupon_stock_is_checked_against_the_stored_strategies_sharing_its_pool(
    engine: AsyncEngine,
) -> None:
    await load_campaign(_coupon_file(1001, 1, "FIVE-1, FIVE-2"), SqlUnitOfWork(engine))
    async with SqlUnitOfWork(engine) as uow:  # strategy 1001's coupon, won and delivered
        assert await uow.code_pools.hand_out("five-off", "o" * 24, "user001", T0) == "FIVE-1"
        await uow.commit()
    await load_campaign(_coupon_file(1002, 1), SqlUnitOfWork(engine))  # takes the free code
    with pytest.raises(InvalidCampaign, match="stored strategies 1001, 1002 among them") as e:
        await load_campaign(_coupon_file(1003, 2, "FIVE-3"), SqlUnitOfWork(engine))
    assert str(e.value.problems[0]).startswith("strategies.0.prizes.0.stock: coupon stock 4 ")
    assert e.value.problems[0].message.endswith("exceeds the pool's 3 codes")
    async with SqlUnitOfWork(engine) as uow:  # nothing of the refused file stored
        assert await uow.strategies.ids() == [1001, 1002]
        assert [(s.total, s.handed) for s in await uow.code_pools.stats()] == [(2, 1)]
