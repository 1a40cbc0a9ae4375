"""Simulating many draws of one strategy and comparing what came out with the exact odds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from raffle.domain.engine import DrawEngine, StockCounter
from raffle.domain.randomness import RandomSource
from raffle.domain.rules import DrawContext
from raffle.service.statistics import ChiSquare, chi_square


@dataclass(frozen=True, slots=True)
class PrizeTally:
    award_id: int
    count: int
    expected_probability: float
    observed_probability: float


@dataclass(frozen=True, slots=True)
class Simulation:
    strategy_id: int
    draws: int
    fit: ChiSquare  # of the counts against the exact odds
    prizes: tuple[PrizeTally, ...]

    @property
    def p_value(self) -> float | None:
        return self.fit.p_value


class _WatchedStock:
    """Notices when stock runs out, the only moment the odds of later draws change."""

    def __init__(self, stock: StockCounter) -> None:
        self._stock = stock
        self.ran_out = False

    def take(self, strategy_id: int, award_id: int) -> bool:
        if self._stock.take(strategy_id, award_id):
            return True
        self.ran_out = True
        return False


def simulate(
    engine: DrawEngine,
    ctx: DrawContext,
    draws: int,
    rng: RandomSource,
    stock: StockCounter,
    progress: Callable[[int], None] = lambda done: None,
) -> Simulation:
    """Run `draws` full-pipeline draws for one context; expected counts follow the exact
    odds in force at each draw, so a prize running out of stock mid-run is accounted for."""
    watched = _WatchedStock(stock)
    counts: Counter[int] = Counter()
    expected: dict[int, Fraction] = {}
    odds, since = engine.odds(ctx), 0
    for done in range(1, draws + 1):
        counts[engine.draw(ctx, rng, watched).award_id] += 1
        if watched.ran_out or done == draws:
            _add(expected, odds, done - since)
            odds, since, watched.ran_out = engine.odds(ctx), done, False
        if done % 10_000 == 0 or done == draws:
            progress(done)
    sort = {p.award_id: p.sort for p in engine.strategy.prizes}
    ids = sorted(set(expected) | set(counts), key=lambda a: (sort.get(a, len(sort)), a))
    tallies = tuple(
        PrizeTally(a, counts[a], float(expected.get(a, 0) / draws), counts[a] / draws) for a in ids
    )
    fit = chi_square([counts[a] for a in ids], [float(expected.get(a, 0)) for a in ids])
    return Simulation(engine.strategy.id, draws, fit, tallies)


def _add(expected: dict[int, Fraction], odds: dict[int, Fraction], draws: int) -> None:
    for award_id, p in odds.items():
        expected[award_id] = expected.get(award_id, Fraction(0)) + p * draws
