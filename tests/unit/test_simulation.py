import sys

import pytest

from raffle.adapters.memory_stock import MemoryStock
from raffle.adapters.randomness import SeededRandomSource, SystemRandomSource
from raffle.domain.rules import DrawContext
from raffle.domain.strategy import Exhaustion
from raffle.service.simulation import simulate
from tests.unit.builders import FALLBACK, engine


def test_counts_and_probabilities_add_up() -> None:
    e = engine({2: "0.5", 3: "0.1"})
    done: list[int] = []
    result = simulate(
        e, DrawContext("u", 1), 25_000, SystemRandomSource(), MemoryStock(), done.append
    )
    assert result.draws == 25_000
    assert sum(p.count for p in result.prizes) == 25_000
    assert [p.award_id for p in result.prizes] == [2, 3, FALLBACK]
    assert {p.award_id: p.expected_probability for p in result.prizes} == {
        2: 0.5,
        3: 0.1,
        FALLBACK: 0.4,
    }
    assert done == [10_000, 20_000, 25_000]
    assert result.p_value > 1e-6


def test_stock_running_out_mid_run_is_part_of_the_expectation() -> None:
    for mode in Exhaustion:
        e = engine({2: "0.5", 3: "0.25"}, stock={2: 10_000}, exhaustion=mode)
        result = simulate(
            e, DrawContext("u", 1), 60_000, SystemRandomSource(), MemoryStock([e.strategy])
        )
        tally = {p.award_id: p for p in result.prizes}
        assert tally[2].count == 10_000
        assert abs(tally[2].expected_probability - 1 / 6) < 0.01
        assert result.p_value > 1e-6, (mode, result)


def test_a_broken_engine_is_caught() -> None:
    e = engine({2: "0.5"})
    e.odds = lambda ctx: {2: 0.45, FALLBACK: 0.55}  # type: ignore[method-assign, assignment, return-value]
    result = simulate(e, DrawContext("u", 1), 100_000, SeededRandomSource(3), MemoryStock())
    assert result.p_value < 1e-6


def test_without_scipy_the_statistic_is_kept_and_the_p_value_is_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    e = engine({2: "0.5"})
    with_scipy = simulate(e, DrawContext("u", 1), 10_000, SeededRandomSource(1), MemoryStock())
    monkeypatch.setitem(sys.modules, "scipy.stats", None)  # what `import` meets when absent
    without = simulate(e, DrawContext("u", 1), 10_000, SeededRandomSource(1), MemoryStock())
    assert with_scipy.p_value is not None
    assert without.p_value is None
    assert without.fit.statistic == with_scipy.fit.statistic
    assert without.fit.degrees_of_freedom == 1
