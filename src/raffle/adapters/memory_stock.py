"""Prize stock held in process memory: for simulations and the single-process embedded default."""

from __future__ import annotations

from collections.abc import Iterable

from raffle.domain.strategy import Strategy


class MemoryStock:
    """Stock levels per (strategy, award). Safe on one event loop: `take` never awaits."""

    def __init__(self, strategies: Iterable[Strategy] = ()) -> None:
        self._left: dict[tuple[int, int], int] = {}
        for strategy in strategies:
            for prize in strategy.prizes:
                if prize.stock is not None:
                    self._left[strategy.id, prize.award_id] = prize.stock

    def take(self, strategy_id: int, award_id: int) -> bool:
        key = (strategy_id, award_id)
        left = self._left.get(key, 0)
        if left <= 0:
            return False
        self._left[key] = left - 1
        return True

    def left(self, strategy_id: int, award_id: int) -> int:
        return self._left.get((strategy_id, award_id), 0)
