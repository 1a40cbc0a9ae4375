import sys
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest

from raffle.adapters.campaign_file import read_campaign
from raffle.adapters.memory_stock import MemoryStock
from raffle.adapters.randomness import SeededRandomSource, SystemRandomSource
from raffle.domain.disclosure import Guarantee, disclosed_rules
from raffle.domain.engine import DrawEngine
from raffle.domain.rules import DrawContext
from raffle.domain.strategy import Exhaustion
from raffle.service.simulation import simulate, simulate_users
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


GUARANTEED = Path(__file__).parents[2] / "examples" / "guaranteed.yaml"
ORDINARY = {2: 0.3, 3: 0.05, 4: 0.01, 1: 0.64}  # the example's rates and what they leave


def _guaranteed_engine() -> tuple[DrawEngine, dict[int, dict[int, Fraction]]]:
    campaign = read_campaign(GUARANTEED)
    [e] = campaign.engines().values()
    known = {a.id: a for a in campaign.awards}
    rules = disclosed_rules(e.strategy, known, e.exhausted)
    return e, {g.draw: dict(g.chances) for g in rules if isinstance(g, Guarantee)}


def test_users_drawing_ten_times_each_match_the_published_odds_draw_by_draw() -> None:
    e, published = _guaranteed_engine()
    assert set(published) == {1, 10}
    result = simulate_users(e, 10_000, 10, SeededRandomSource(14), MemoryStock([e.strategy]))
    assert (result.draws, len(result.by_draw)) == (100_000, 10)
    for n, by_draw in enumerate(result.by_draw, 1):
        expected = {p.award_id: p.expected_probability for p in by_draw.prizes}
        wanted = {a: float(c) for a, c in published[n].items()} if n in published else ORDINARY
        assert {a: p for a, p in expected.items() if p} == pytest.approx(wanted), n
        assert sum(p.count for p in by_draw.prizes) == 10_000
    assert {p.award_id for p in result.by_draw[0].prizes if p.count} == {2, 3, 4}  # all won
    assert result.p_value is not None
    assert result.p_value > 1e-3, result.fit


def test_draws_that_break_a_published_guarantee_fail_the_check() -> None:
    e, _ = _guaranteed_engine()
    known = {a.id: a for a in read_campaign(GUARANTEED).awards}
    plain = DrawEngine(replace(e.strategy, rules=()), known)
    plain.select, plain.odds = e.select, e.odds  # type: ignore[method-assign]
    result = simulate_users(plain, 10_000, 10, SeededRandomSource(14), MemoryStock())
    assert result.p_value is not None
    assert result.p_value < 1e-6
