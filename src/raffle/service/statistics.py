"""Goodness of fit for simulations: Pearson's chi-square against exact expected counts."""

from __future__ import annotations

import math
from dataclasses import dataclass

MIN_EXPECTED = 5.0  # below this the chi-square approximation is poor: such cells are pooled
STATS_EXTRA = "pip install 'raffle[stats]'"  # what brings scipy, for the p-value


@dataclass(frozen=True, slots=True)
class ChiSquare:
    statistic: float  # infinite when a count fell where none could
    degrees_of_freedom: int
    p_value: float | None  # None without scipy (see STATS_EXTRA)


def chi_square(observed: list[int], expected: list[float]) -> ChiSquare:
    """Pearson's test of `observed` counts under `expected` counts (same total).

    Cells expected fewer than five times are pooled into one. A count in a cell that
    cannot happen (expected 0) makes the p-value 0: the engine handed out the impossible.
    """
    if any(o > 0 and e == 0 for o, e in zip(observed, expected, strict=True)):
        return ChiSquare(math.inf, max(len(observed) - 1, 0), 0.0)
    cells = [(o, e) for o, e in zip(observed, expected, strict=True) if e >= MIN_EXPECTED]
    small = [(o, e) for o, e in zip(observed, expected, strict=True) if 0 < e < MIN_EXPECTED]
    if small:
        cells.append((sum(o for o, _ in small), sum(e for _, e in small)))
    statistic = sum((o - e) ** 2 / e for o, e in cells)
    freedom = len(cells) - 1
    if freedom < 1:
        return ChiSquare(statistic, 0, 1.0)
    return ChiSquare(statistic, freedom, _p_value(statistic, freedom))


def combined(fits: list[ChiSquare]) -> ChiSquare:
    """Independent tests as one: their statistics and degrees of freedom summed (each group
    of counts has its own fixed total, so each loses one degree of its own)."""
    statistic = sum(f.statistic for f in fits)
    freedom = sum(f.degrees_of_freedom for f in fits)
    if math.isinf(statistic):
        return ChiSquare(statistic, freedom, 0.0)
    if freedom < 1:
        return ChiSquare(statistic, 0, 1.0)
    return ChiSquare(statistic, freedom, _p_value(statistic, freedom))


def chi_square_p_value(observed: list[int], expected: list[float]) -> float:
    """The p-value of `chi_square`; scipy must be installed."""
    p_value = chi_square(observed, expected).p_value
    if p_value is None:
        raise ModuleNotFoundError(f"the p-value needs scipy: {STATS_EXTRA}")
    return p_value


def _p_value(statistic: float, freedom: int) -> float | None:
    # Imported here: scipy.stats is slow to import, and every `raffle` process (the API's,
    # the workers') imports this module through the CLI, for `simulate` only. It is an
    # extra (`raffle[stats]`): the service runs without it.
    try:
        from scipy.stats import chi2
    except ImportError:
        return None
    return float(chi2.sf(statistic, freedom))
