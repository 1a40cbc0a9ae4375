"""Simulating many draws of one strategy and comparing what came out with the exact odds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from raffle.domain.engine import DrawEngine, StockCounter
from raffle.domain.randomness import RandomSource
from raffle.domain.rules import DrawContext, Selection
from raffle.service.statistics import ChiSquare, chi_square, combined


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
    return _fit(engine, draws, counts, expected)


@dataclass(frozen=True, slots=True)
class UsersSimulation:
    """Users each drawing `draws_each` times in a row, so their nth draw has count n."""

    strategy_id: int
    users: int
    draws_each: int
    fit: ChiSquare  # of every (draw number, prize) count against the exact odds of that draw
    by_draw: tuple[Simulation, ...]  # the users' 1st draws, their 2nd, …

    @property
    def draws(self) -> int:
        return self.users * self.draws_each

    @property
    def p_value(self) -> float | None:
        return self.fit.p_value


def simulate_users(
    engine: DrawEngine,
    users: int,
    draws_each: int,
    rng: RandomSource,
    stock: StockCounter,
    progress: Callable[[int], None] = lambda done: None,
    user_prefix: str = "simulated-user",
) -> UsersSimulation:
    """`users` users each drawing `draws_each` times, one after another; each draw expected
    at the exact odds in force for its user and draw number (guarantees, tiers, locks, a
    prize running out mid-run all counted)."""
    watched = _WatchedStock(stock)
    counts: list[Counter[int]] = [Counter() for _ in range(draws_each)]
    expected: list[dict[int, Fraction]] = [{} for _ in range(draws_each)]
    # The odds of a draw follow from the rule that selects its pool and its count; kept
    # until a prize runs out, then read again. Summed as how many draws met each.
    odds: dict[tuple[Selection, int], dict[int, Fraction]] = {}
    met: list[Counter[tuple[Selection, int]]] = [Counter() for _ in range(draws_each)]
    done = 0
    for user in range(1, users + 1):
        for n in range(1, draws_each + 1):
            ctx = DrawContext(f"{user_prefix}-{user}", n)
            key = (engine.select(ctx), n)
            if key not in odds:
                odds[key] = engine.odds(ctx)
            met[n - 1][key] += 1
            counts[n - 1][engine.draw(ctx, rng, watched).award_id] += 1
            if watched.ran_out:
                _settle(expected, met, odds)
                odds.clear()
                watched.ran_out = False
            done += 1
            if done % 10_000 == 0 or done == users * draws_each:
                progress(done)
    _settle(expected, met, odds)
    by_draw = tuple(_fit(engine, users, counts[n], expected[n]) for n in range(draws_each))
    return UsersSimulation(
        engine.strategy.id, users, draws_each, combined([s.fit for s in by_draw]), by_draw
    )


def _settle(
    expected: list[dict[int, Fraction]],
    met: list[Counter[tuple[Selection, int]]],
    odds: dict[tuple[Selection, int], dict[int, Fraction]],
) -> None:
    """Add to `expected` the draws `met` counted under `odds`, and start counting anew."""
    for n, seen in enumerate(met):
        for key, draws in seen.items():
            _add(expected[n], odds[key], draws)
        seen.clear()


def _fit(
    engine: DrawEngine, draws: int, counts: Counter[int], expected: dict[int, Fraction]
) -> Simulation:
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
