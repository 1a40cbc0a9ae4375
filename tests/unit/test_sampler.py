from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raffle.adapters.randomness import SeededRandomSource, SystemRandomSource
from raffle.domain.sampler import AliasTable
from raffle.service.statistics import chi_square_p_value
from tests.unit.builders import Sweep

ALPHA = 1e-6
BIG_MARKET = [300000, 200000, 200000, 100000, 100000, 50000, 40000, 9900, 100]


def test_each_rate_is_exactly_its_mass() -> None:
    table = AliasTable(dict(enumerate(BIG_MARKET)))
    assert table.masses() == {i: Fraction(w, 10**6) for i, w in enumerate(BIG_MARKET)}
    assert table.masses()[8] == Fraction(1, 10_000)


def test_a_one_in_a_million_rate_is_not_rounded_away() -> None:
    table = AliasTable({1: 1, 2: 999_999})
    assert table.masses() == {1: Fraction(1, 10**6), 2: Fraction(999_999, 10**6)}


def test_enumerating_every_random_value_reproduces_the_weights_exactly() -> None:
    table = AliasTable({10: 3, 20: 1, 30: 6})  # span: 3 columns x 10 units
    sweep = Sweep()
    counts = Counter(table.sample(sweep) for _ in range(30))
    assert counts == {10: 9, 20: 3, 30: 18}


def test_zero_weights_never_come_out() -> None:
    table = AliasTable({1: 0, 2: 5, 3: 0})
    assert len(table) == 1
    assert {table.sample(SeededRandomSource(s)) for s in range(50)} == {2}


@pytest.mark.parametrize("weights", [{}, {1: 0}, {1: -1, 2: 3}])
def test_tables_without_positive_weights_or_with_negative_ones_are_refused(
    weights: dict[int, int],
) -> None:
    with pytest.raises(ValueError, match="weight"):
        AliasTable(weights)


@given(st.dictionaries(st.integers(0, 10_000), st.integers(1, 10**6), min_size=1, max_size=60))
def test_alias_columns_hold_exactly_each_weight(weights: dict[int, int]) -> None:
    total = sum(weights.values())
    assert AliasTable(weights).masses() == {k: Fraction(w, total) for k, w in weights.items()}


@given(st.dictionaries(st.integers(0, 50), st.integers(1, 40), min_size=1, max_size=8))
def test_full_enumeration_matches_the_weights(weights: dict[int, int]) -> None:
    table = AliasTable(weights)
    span = table._span
    sweep = Sweep()
    counts = Counter(table.sample(sweep) for _ in range(span))
    total = sum(weights.values())
    assert {k: Fraction(c, span) for k, c in counts.items()} == {
        k: Fraction(w, total) for k, w in weights.items()
    }


@pytest.mark.parametrize(
    "weights",
    [
        BIG_MARKET,
        [100, 999_900],  # a 0.0001 rate
        [300000, 200000, 100000, 10000, 390000],  # 0.61 of prizes + 0.39 remainder
        [1] * 1000,  # a thousand equal prizes
    ],
    ids=["big-market", "one-in-ten-thousand", "sum-0.61", "thousand-prizes"],
)
def test_chi_square_at_100k_draws_with_the_csprng(weights: list[int]) -> None:
    table = AliasTable(dict(enumerate(weights)))
    rng = SystemRandomSource()
    draws = 100_000
    counts = Counter(table.sample(rng) for _ in range(draws))
    total = sum(weights)
    observed = [counts[i] for i in range(len(weights))]
    expected = [draws * w / total for w in weights]
    assert chi_square_p_value(observed, expected) > ALPHA


def test_the_chi_square_check_can_fail() -> None:
    # A biased sampler (the 0.0001 prize 10x too often) must be caught at the same size.
    assert chi_square_p_value([99_000, 1_000], [99_990, 10]) < ALPHA
    assert chi_square_p_value([99_990, 9, 1], [99_990, 10, 0]) == 0.0
