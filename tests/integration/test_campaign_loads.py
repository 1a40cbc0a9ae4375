"""Campaign loads at the same moment on every backend: the coupon stock check and the load
it guards are one step, so loads that each fit a pool alone never over-commit it together,
and the refused ones store nothing."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.campaign_file import parse_campaign
from raffle.adapters.sql.tables.config import campaign_load
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork
from raffle.domain.campaign import Campaign
from raffle.service.campaigns import InvalidCampaign, load_campaign

CODES = 10
LOADS = 120  # in flight at once, each asking for a unit of the pool's stock
POOL = "five-off"


def _pool_file() -> Campaign:
    codes = ", ".join(f"FIVE-{n}" for n in range(CODES))
    return parse_campaign(f"code_pools:\n  {POOL}: [{codes}]\n", "pool")


def _sharing(n: int, stock: int = 1) -> Campaign:
    """A file of its own awards and strategy (no row shared with another load, so nothing but
    the check's own lock orders them) whose coupon prize takes `stock` codes of the pool."""
    thanks, coupon, strategy = 10_000 + n, 20_000 + n, 30_000 + n
    text = f"""awards:
  - {{id: {thanks}, kind: thanks, title: Thanks}}
  - {{id: {coupon}, kind: coupon, title: Five off, config: {POOL}}}
strategies:
  - id: {strategy}
    fallback: {{award: {thanks}}}
    prizes: [{{award: {coupon}, rate: 0.5, stock: {stock}}}]
"""
    return parse_campaign(text, f"file {n}")


async def test_concurrent_loads_never_over_commit_a_coupon_pool(engine: AsyncEngine) -> None:
    await load_campaign(_pool_file(), SqlUnitOfWork(engine))
    loads = (load_campaign(_sharing(n), SqlUnitOfWork(engine)) for n in range(LOADS))
    results = await asyncio.gather(*loads, return_exceptions=True)
    refused = [r for r in results if isinstance(r, BaseException)]
    assert all(isinstance(r, InvalidCampaign) for r in refused), refused
    for problem in (str(r).split(": ", 1)[1] for r in refused):  # each saw all 10 stored
        assert problem.startswith(f"coupon stock {CODES + 1} (with the other prizes drawing")
        assert problem.endswith(f"exceeds the pool's {CODES} codes")
    stored = sorted(30_000 + n for n, r in enumerate(results) if not isinstance(r, BaseException))
    assert len(stored) == CODES  # every load fit alone: exactly the pool's codes were taken
    async with SqlUnitOfWork(engine) as uow:
        assert await uow.strategies.ids() == stored  # the refused stored no strategy...
        awards = await uow.awards.all()
        kept = {a for n in range(LOADS) for a in (10_000 + n, 20_000 + n) if a in awards}
        assert kept == {a for s in stored for a in (s - 20_000, s - 10_000)}  # ...nor award
        assert [(p.name, p.total, p.handed) for p in await uow.code_pools.stats()] == [
            (POOL, CODES, 0)
        ]


async def test_loads_count_on_the_row_and_put_it_back_when_deleted(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        assert (await connection.execute(select(campaign_load))).all() == [(1, 0)]  # migrated
        await connection.execute(delete(campaign_load))
    await load_campaign(_pool_file(), SqlUnitOfWork(engine))
    with pytest.raises(InvalidCampaign):
        await load_campaign(_sharing(1, stock=CODES + 1), SqlUnitOfWork(engine))
    await load_campaign(_sharing(0), SqlUnitOfWork(engine))
    async with engine.begin() as connection:
        assert (await connection.execute(select(campaign_load))).all() == [(1, 2)]
