"""A guarantee by level on every database: while its activity runs, a prize's level may change
only if no guarantee's pool changes with it (by the console or by a campaign load), and before
it runs a level change that would empty a pool is refused; either way nothing is stored."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from fractions import Fraction

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.activity import Activity, ActivityState
from raffle.domain.awards import Award, AwardKind
from raffle.domain.campaign import Campaign
from raffle.domain.engine import DrawEngine
from raffle.domain.errors import InvalidConfig
from raffle.domain.prize_cards import PrizeCard
from raffle.domain.rules import DrawContext
from raffle.domain.strategy import Fallback, Strategy, StrategyPrize
from raffle.service.campaigns import FrozenOdds, load_campaign
from raffle.service.prize_pool import change_prize

NOW = datetime(2026, 11, 25, 3, tzinfo=UTC)
RUNNING, DRAFT = 7, 8  # strategies: one a running activity publishes, one an edited one's
TENTH = DrawContext("ann", 10)


class Clock:
    def now(self) -> datetime:
        return NOW


def _strategy(strategy_id: int) -> Strategy:
    return Strategy(
        strategy_id,
        (
            StrategyPrize(
                109, Decimal("0.01"), 10, 0, card=PrizeCard(level=1, level_name="一等奖")
            ),
            StrategyPrize(105, Decimal("0.1"), 100, 1, card=PrizeCard(level=3)),
            StrategyPrize(102, Decimal("0.3"), None, 2, card=PrizeCard(level=5)),
        ),
        Fallback(101),
        (("guarantee", "10:level<=3"),),
    )


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade(database_url)
    engine = create_engine(database_url)
    window = (NOW - timedelta(days=1), NOW + timedelta(days=9))
    async with SqlUnitOfWork(engine) as uow:
        for award in (109, 105, 102, 101):
            await uow.awards.save(Award(award, AwardKind.PHYSICAL, f"奖品 {award}"))
        for strategy_id in (RUNNING, DRAFT):
            await uow.strategies.save(_strategy(strategy_id))
        await uow.activities.save(
            Activity(201, "双十一", RUNNING, *window, state=ActivityState.RUNNING)
        )
        await uow.activities.save(Activity(202, "双十二", DRAFT, *window, state=ActivityState.EDIT))
        await uow.commit()
    yield engine
    await engine.dispose()


async def _stored(engine: AsyncEngine, strategy_id: int) -> Strategy:
    async with SqlUnitOfWork(engine) as uow:
        stored = await uow.strategies.get(strategy_id)
        assert stored is not None
        return stored


async def _tenth_draw(engine: AsyncEngine, strategy_id: int) -> dict[int, Fraction]:
    async with SqlUnitOfWork(engine) as uow:
        awards = await uow.awards.all()
    return DrawEngine(await _stored(engine, strategy_id), awards).odds(TENTH)


async def test_a_running_activitys_guarantee_keeps_its_pool_whatever_the_console_does(
    engine: AsyncEngine,
) -> None:
    before = await _tenth_draw(engine, RUNNING)
    assert before == {109: Fraction(1, 11), 105: Fraction(10, 11)}
    for award_id, level in ((102, 2), (105, 4), (109, None)):  # into or out of the pool
        with pytest.raises(FrozenOdds, match="guarantee by level"):
            await change_prize(RUNNING, award_id, SqlUnitOfWork(engine), card={"level": level})
    assert await _stored(engine, RUNNING) == _strategy(RUNNING)  # nothing stored
    for award_id, level in ((102, 9), (105, 2), (109, 2)):  # the pool stays as it was
        await change_prize(RUNNING, award_id, SqlUnitOfWork(engine), card={"level": level})
    assert [p.card.level for p in (await _stored(engine, RUNNING)).prizes] == [2, 2, 9]
    assert await _tenth_draw(engine, RUNNING) == before


async def test_a_campaign_load_cannot_move_a_prize_into_a_running_guarantee(
    engine: AsyncEngine,
) -> None:
    async with SqlUnitOfWork(engine) as uow:
        awards = tuple((await uow.awards.all()).values())
    published = _strategy(RUNNING)
    promoted = replace(published.prizes[2], card=PrizeCard(level=3))
    changed = replace(published, prizes=(*published.prizes[:2], promoted))
    with pytest.raises(FrozenOdds, match="guarantee by level"):
        await load_campaign(Campaign(awards, (changed,)), SqlUnitOfWork(engine), clock=Clock())
    assert await _stored(engine, RUNNING) == published
    renamed = replace(published.prizes[0], card=PrizeCard(level=2, level_name="特等奖"))
    same_pool = replace(published, prizes=(renamed, *published.prizes[1:]))
    await load_campaign(Campaign(awards, (same_pool,)), SqlUnitOfWork(engine), clock=Clock())
    assert await _stored(engine, RUNNING) == same_pool


async def test_before_it_runs_a_level_may_move_but_not_empty_a_pool(engine: AsyncEngine) -> None:
    await change_prize(DRAFT, 109, SqlUnitOfWork(engine), card={"level": 4})
    with pytest.raises(InvalidConfig, match="no prize has level 3 or better"):
        await change_prize(DRAFT, 105, SqlUnitOfWork(engine), card={"level": 4})
    assert [p.card.level for p in (await _stored(engine, DRAFT)).prizes] == [4, 3, 5]
    await change_prize(DRAFT, 102, SqlUnitOfWork(engine), card={"level": 1})
    assert await _tenth_draw(engine, DRAFT) == {105: Fraction(1, 4), 102: Fraction(3, 4)}
