"""Prize stock as the database knows it: configured units and what award rows used."""

from __future__ import annotations

from collections.abc import Callable

from raffle.service.ports import Shards, UnitOfWork
from raffle.service.reconcile import count_wins


async def configured_stock(uow: Callable[[], UnitOfWork], strategy_id: int) -> dict[int, int]:
    """Configured units per stocked prize of a strategy."""
    async with uow() as reader:
        strategy = await reader.strategies.get(strategy_id)
    if strategy is None:
        return {}
    return {p.award_id: p.stock for p in strategy.prizes if p.stock is not None}


async def units_left(
    uow: Callable[[], UnitOfWork], shards: Shards, strategy_id: int
) -> dict[int, int]:
    """Units left per stocked prize: configured stock less the award rows in every shard.
    What a single process starts its in-memory counters from."""
    stocks = await configured_stock(uow, strategy_id)
    wins = await count_wins(shards, strategy_id, stocks)
    return {award_id: max(0, stock - wins[award_id]) for award_id, stock in stocks.items()}
