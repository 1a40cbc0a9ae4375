"""Levels operators watch, read when metrics are scraped: the outbox backlog and stock left."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from raffle.domain.activity import ActivityState
from raffle.service.catalogue import Catalogue
from raffle.service.ports import Metrics, PrizeStock, Shards, UnitOfWork


async def measure(
    *,
    config: Callable[[], UnitOfWork],
    catalogue: Catalogue,
    shards: Shards,
    stock: PrizeStock,
    metrics: Metrics,
    now: datetime,
) -> None:
    """The outbox's backlog over every shard and the age of its oldest message; the units
    left of each stocked prize of the running activities, as the stock counter sees them
    (a prize whose counter is not loaded yet is left out)."""
    backlog, oldest = 0, now
    for shard in shards.every():
        async with shard:
            waiting, first = await shard.outbox.backlog()
        backlog += waiting
        oldest = min(oldest, first or now)
    metrics.outbox(backlog, (now - oldest).total_seconds())
    async with config() as uow:
        activities = await uow.activities.all()
    strategies = {}
    for activity in activities:
        if activity.state is ActivityState.RUNNING:
            engine = await catalogue.engine(activity)
            strategies[engine.strategy.id] = engine.strategy
    for strategy in strategies.values():
        for prize in strategy.prizes:
            if prize.stock is None:
                continue
            left = await stock.left(strategy.id, prize.award_id)
            if left is not None:
                metrics.stock_left(strategy.id, prize.award_id, left)
