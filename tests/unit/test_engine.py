from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raffle.adapters.memory_stock import MemoryStock
from raffle.adapters.randomness import SeededRandomSource, SystemRandomSource
from raffle.domain.awards import Award, AwardKind
from raffle.domain.engine import FALLBACK as FALLBACK_OUTCOME
from raffle.domain.engine import LOSE, WIN, DrawEngine, Outcome
from raffle.domain.rules import DrawContext
from raffle.domain.strategy import Exhaustion, Fallback
from raffle.service.statistics import chi_square_p_value
from tests.unit.builders import FALLBACK, awards, engine, strategy

TIERS = "60:102,103,104,105 200:106,107 1000:105"
TIER_1 = {102, 103, 104, 105}
BIG_MARKET = {
    101: "0.30", 102: "0.20", 103: "0.20", 104: "0.10", 105: "0.10",
    106: "0.05", 107: "0.04", 108: "0.0099", 109: "0.0001",
}  # fmt: skip


def ctx(draw_count: int = 1, user: str = "alice") -> DrawContext:
    return DrawContext(user, draw_count)


def draw_many(
    e: DrawEngine, c: DrawContext, n: int, stock: MemoryStock | None = None
) -> list[Outcome]:
    rng, stock = SeededRandomSource(1), stock or MemoryStock([e.strategy])
    return [e.draw(c, rng, stock) for _ in range(n)]


def test_the_remainder_goes_to_the_fallback() -> None:
    e = engine({2: "0.5", 3: "0.1", 4: "0.01"})
    assert e.odds(ctx()) == {
        2: Fraction(1, 2),
        3: Fraction(1, 10),
        4: Fraction(1, 100),
        FALLBACK: Fraction(39, 100),
    }


def test_listed_users_get_the_fixed_prize() -> None:
    e = engine({2: "0.5", 3: "0.5"}, rules=(("listed", "9:bob,carol"),))
    assert {o.award_id for o in draw_many(e, ctx(user="bob"), 50)} == {9}
    assert {o.rule for o in draw_many(e, ctx(user="bob"), 5)} == {"listed"}
    assert 9 not in {o.award_id for o in draw_many(e, ctx(user="alice"), 200)}


def test_a_listed_prize_passes_the_stock_check() -> None:
    e = engine({2: "0.5", 9: "0"}, stock={9: 2}, rules=(("listed", "9:bob"),))
    outcomes = draw_many(e, ctx(user="bob"), 5)
    assert [o.award_id for o in outcomes] == [9, 9, FALLBACK, FALLBACK, FALLBACK]
    assert outcomes[2].rule == "stock"


@pytest.mark.parametrize(
    ("draw_count", "pool"),
    [(59, None), (60, TIER_1), (61, TIER_1), (199, TIER_1),
     (200, {106, 107}), (999, {106, 107}), (1000, {105}), (5000, {105})],
)  # fmt: skip
def test_weight_tiers_start_exactly_at_their_threshold(
    draw_count: int, pool: set[int] | None
) -> None:
    e = engine(BIG_MARKET, rules=(("weight", TIERS),))
    odds = e.odds(ctx(draw_count))
    if pool is None:
        assert odds == e.odds(ctx(1))
        assert len(odds) == 9
    else:
        assert set(odds) == pool
        tier_total = sum(Fraction(BIG_MARKET[a]) for a in pool)
        assert odds == {a: Fraction(BIG_MARKET[a]) / tier_total for a in pool}
        assert {o.award_id for o in draw_many(e, ctx(draw_count), 2000)} == pool
        assert {o.rule for o in draw_many(e, ctx(draw_count), 20)} == {"weight"}


def test_listed_runs_before_weight_when_configured_first() -> None:
    e = engine(BIG_MARKET, rules=(("listed", "100:bob"), ("weight", TIERS)))
    assert e.odds(ctx(500, user="bob")) == {100: 1}
    assert set(e.odds(ctx(500, user="alice"))) == {106, 107}


@pytest.mark.parametrize(("draw_count", "unlocked"), [(1, False), (2, False), (3, True), (4, True)])
def test_lock_counts_the_current_draw(draw_count: int, unlocked: bool) -> None:
    e = engine({2: "1"}, locks={2: 3})
    outcomes = draw_many(e, ctx(draw_count), 20)
    if unlocked:
        assert {(o.award_id, o.rule) for o in outcomes} == {(2, "default")}
    else:
        assert {(o.award_id, o.rule) for o in outcomes} == {(FALLBACK, "lock")}
    assert e.odds(ctx(draw_count)) == ({2: 1} if unlocked else {FALLBACK: 1})


def test_a_locked_prize_takes_no_stock() -> None:
    e = engine({2: "1"}, locks={2: 3}, stock={2: 1})
    stock = MemoryStock([e.strategy])
    draw_many(e, ctx(1), 10, stock)
    assert stock.left(e.strategy.id, 2) == 1


def test_fallback_mode_keeps_the_odds_of_other_prizes() -> None:
    e = engine({2: "0.5", 3: "0.25"}, stock={2: 3}, exhaustion=Exhaustion.FALLBACK)
    outcomes = draw_many(e, ctx(), 400)
    assert sum(o.award_id == 2 for o in outcomes) == 3
    assert any(o.rule == "stock" for o in outcomes)
    assert e.exhausted == {2}
    assert e.odds(ctx()) == {3: Fraction(1, 4), FALLBACK: Fraction(3, 4)}


def test_redistribute_mode_renormalises_the_rest() -> None:
    e = engine({2: "0.5", 3: "0.25"}, stock={2: 3}, exhaustion=Exhaustion.REDISTRIBUTE)
    outcomes = draw_many(e, ctx(), 400)
    assert sum(o.award_id == 2 for o in outcomes) == 3
    assert e.odds(ctx()) == {3: Fraction(1, 2), FALLBACK: Fraction(1, 2)}
    assert "stock" not in {o.rule for o in outcomes}  # a redraw, not a consolation


def test_redistribute_with_everything_gone_gives_the_fallback() -> None:
    e = engine({2: "1"}, stock={2: 2}, exhaustion=Exhaustion.REDISTRIBUTE)
    outcomes = draw_many(e, ctx(), 5)
    assert [o.award_id for o in outcomes] == [2, 2, FALLBACK, FALLBACK, FALLBACK]
    assert e.odds(ctx()) == {FALLBACK: 1}


def test_weight_tier_prizes_pass_the_stock_check() -> None:
    e = engine(BIG_MARKET, rules=(("weight", "10:109"),), stock={109: 1})
    outcomes = draw_many(e, ctx(10), 3)
    assert [o.award_id for o in outcomes] == [109, FALLBACK, FALLBACK]


def test_prizes_with_zero_stock_are_exhausted_from_the_start() -> None:
    e = engine({2: "0.5"}, stock={2: 0}, exhaustion=Exhaustion.REDISTRIBUTE)
    assert e.odds(ctx()) == {FALLBACK: 1}


def test_luck_points_are_uniform_over_the_whole_range() -> None:
    s = strategy({2: "0.5"}, locks={2: 5}, fallback=Fallback(FALLBACK, (1, 100)))
    e = DrawEngine(s, awards(2))
    rng, stock = SystemRandomSource(), MemoryStock([s])
    points = Counter(e.draw(ctx(1), rng, stock).points for _ in range(100_000))
    assert set(points) == set(range(1, 101))
    assert chi_square_p_value([points[p] for p in range(1, 101)], [1000.0] * 100) > 1e-6


def test_random_points_awards_draw_from_their_own_range() -> None:
    s = strategy({2: "1"})
    e = DrawEngine(s, awards(2, random_points={2: "5,7"}))
    outcomes = draw_many(e, ctx(), 300)
    assert {o.points for o in outcomes} == {5, 6, 7}


def test_a_fallback_points_range_overrides_the_awards_own() -> None:
    s = strategy({}, fallback=Fallback(FALLBACK, (40, 41)))
    e = DrawEngine(s, awards(random_points={FALLBACK: "1,2"}))
    assert {o.points for o in draw_many(e, ctx(), 100)} == {40, 41}


def test_chi_square_of_the_full_pipeline_at_100k_draws() -> None:
    e = engine(
        BIG_MARKET,
        locks={107: 1, 108: 2, 109: 3},
        rules=(("listed", "100:bob"), ("weight", TIERS)),
    )
    for c in (ctx(1), ctx(3), ctx(60)):
        rng, stock = SystemRandomSource(), MemoryStock([e.strategy])
        counts = Counter(e.draw(c, rng, stock).award_id for _ in range(100_000))
        odds = e.odds(c)
        assert set(counts) <= set(odds)
        ids = sorted(odds)
        p = chi_square_p_value([counts[a] for a in ids], [float(odds[a] * 100_000) for a in ids])
        assert p > 1e-6, (c, counts, odds)


prize_tables = st.dictionaries(
    st.integers(2, 30), st.integers(0, 400_000), min_size=1, max_size=6
).filter(lambda t: sum(t.values()) <= 10**6)


@settings(max_examples=150, deadline=None)
@given(
    table=prize_tables,
    stocks=st.dictionaries(st.integers(2, 30), st.integers(0, 5)),
    locks=st.dictionaries(st.integers(2, 30), st.integers(1, 4)),
    mode=st.sampled_from(Exhaustion),
    counts=st.lists(st.integers(1, 6), min_size=1, max_size=60),
    seed=st.integers(0, 2**32),
)
def test_a_draw_never_yields_a_prize_outside_the_table_or_beyond_its_stock(
    table: dict[int, int],
    stocks: dict[int, int],
    locks: dict[int, int],
    mode: Exhaustion,
    counts: list[int],
    seed: int,
) -> None:
    rates = {a: f"{w / 10**6:.6f}" for a, w in table.items()}
    stock = {a: s for a, s in stocks.items() if a in table}
    lock = {a: n for a, n in locks.items() if a in table}
    e = engine(rates, stock=stock, locks=lock, exhaustion=mode)
    counter, rng = MemoryStock([e.strategy]), SeededRandomSource(seed)
    handed: Counter[int] = Counter()
    for count in counts:
        outcome = e.draw(ctx(count), rng, counter)
        assert outcome.award_id in set(table) | {FALLBACK}
        if outcome.award_id in lock:
            assert count >= lock[outcome.award_id]
        handed[outcome.award_id] += 1
        for award_id, left in stock.items():
            assert handed[award_id] <= left
        assert sum(e.odds(ctx(count)).values()) == 1


def test_an_outcome_is_named_by_what_the_draw_handed_out() -> None:
    consolation = DrawEngine(
        strategy({2: "0.5"}, fallback=Fallback(3)),
        {**awards(2), 3: Award(3, AwardKind.RANDOM_POINTS, "points", "1,5")},
    )
    assert [consolation.outcome(a) for a in (2, 3, FALLBACK)] == [WIN, FALLBACK_OUTCOME, LOSE]
    thanks = engine({2: "0.5"})  # its fallback is "thanks for playing"
    assert [thanks.outcome(a) for a in (2, FALLBACK)] == [WIN, LOSE]
