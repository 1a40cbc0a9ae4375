"""The "100 % win" engine (seed 004 `perfect_activity`): only real prizes are drawn, at their
rates renormalised over those with stock left, exactly; the odds say so."""

from collections import Counter
from decimal import Decimal
from fractions import Fraction

from raffle.adapters.memory_stock import MemoryStock
from raffle.adapters.randomness import SeededRandomSource, SystemRandomSource
from raffle.domain.awards import Award, AwardKind
from raffle.domain.engine import WIN, DrawEngine
from raffle.domain.rules import DrawContext
from raffle.domain.strategy import Exhaustion, Fallback, Strategy, StrategyPrize
from raffle.service.simulation import simulate
from raffle.service.statistics import chi_square_p_value
from tests.unit.builders import FALLBACK, awards, strategy

CTX = DrawContext("alice", 1)
MISS = 9  # a "thanks" prize listed in the odds table with a rate of its own


def perfect(rates: dict[int, str], **options: object) -> DrawEngine:
    built = strategy(rates, **options)  # type: ignore[arg-type]
    catalogue = awards(*rates) | {MISS: Award(MISS, AwardKind.THANKS, "try again")}
    return DrawEngine(built, catalogue, perfect=True)


def test_the_misses_are_not_drawn_and_the_real_prizes_renormalise_exactly() -> None:
    e = perfect({2: "0.1", 3: "0.3", MISS: "0.5"})
    # 0.1 and 0.3 of the draws, the rest (the fallback's 0.1 and "thanks"' 0.5) not drawn.
    assert e.odds(CTX) == {2: Fraction(1, 4), 3: Fraction(3, 4)}
    rng, stock = SeededRandomSource(5), MemoryStock([e.strategy])
    assert {e.draw(CTX, rng, stock).award_id for _ in range(2_000)} == {2, 3}


def test_an_exhausted_prize_leaves_the_pool_whatever_the_strategys_mode() -> None:
    e = perfect({2: "0.1", 3: "0.3"}, stock={3: 5}, exhaustion=Exhaustion.FALLBACK)
    rng, stock = SeededRandomSource(2), MemoryStock([e.strategy])
    outcomes = [e.draw(CTX, rng, stock) for _ in range(200)]
    assert all(e.outcome(o.award_id) == WIN for o in outcomes)  # every draw won
    assert Counter(o.award_id for o in outcomes)[3] == 5
    assert e.odds(CTX) == {2: Fraction(1)}


def test_when_every_real_prize_is_gone_the_fallback_says_so() -> None:
    e = perfect({2: "0.2"}, stock={2: 3})
    rng, stock = SeededRandomSource(1), MemoryStock([e.strategy])
    outcomes = [e.draw(CTX, rng, stock) for _ in range(5)]
    assert [(o.award_id, o.rule) for o in outcomes] == [(2, "default")] * 3 + [
        (FALLBACK, "stock")
    ] * 2
    assert e.odds(CTX) == {FALLBACK: Fraction(1)}


def test_a_prize_that_is_the_fallbacks_award_is_not_a_win_and_is_not_drawn() -> None:
    built = Strategy(
        7,
        (StrategyPrize(2, Decimal("0.2")), StrategyPrize(FALLBACK, Decimal("0.7"))),
        Fallback(FALLBACK),
    )
    e = DrawEngine(built, awards(2), perfect=True)
    assert e.odds(CTX) == {2: Fraction(1)}


def test_chi_square_of_the_perfect_odds_at_100k_draws() -> None:
    e = perfect({2: "0.05", 3: "0.15", 4: "0.3", MISS: "0.4"})
    rng, stock = SystemRandomSource(), MemoryStock([e.strategy])
    counts = Counter(e.draw(CTX, rng, stock).award_id for _ in range(100_000))
    odds = e.odds(CTX)
    assert odds == {2: Fraction(1, 10), 3: Fraction(3, 10), 4: Fraction(6, 10)}
    ids = sorted(odds)
    p = chi_square_p_value([counts[a] for a in ids], [float(odds[a] * 100_000) for a in ids])
    assert p > 1e-6, (counts, odds)


def test_the_simulation_of_a_perfect_activity_fits_its_published_odds() -> None:
    # Stock running out mid-run is part of the expectation, as for every strategy.
    e = perfect({2: "0.1", 3: "0.2", MISS: "0.3"}, stock={2: 2_000})
    result = simulate(e, CTX, 30_000, SystemRandomSource(), MemoryStock([e.strategy]))
    tally = {p.award_id: p.count for p in result.prizes}
    assert tally[2] == 2_000
    assert FALLBACK not in tally or tally[FALLBACK] == 0
    assert result.p_value is not None
    assert result.p_value > 1e-6, result
