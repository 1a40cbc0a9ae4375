"""Goodness of fit for simulations: Pearson's chi-square against exact expected counts."""

from __future__ import annotations

MIN_EXPECTED = 5.0  # below this the chi-square approximation is poor: such cells are pooled


def chi_square_p_value(observed: list[int], expected: list[float]) -> float:
    """The p-value of `observed` counts under `expected` counts (same total).

    Cells expected fewer than five times are pooled into one. A count in a cell that
    cannot happen (expected 0) makes the p-value 0: the engine handed out the impossible.
    """
    if any(o > 0 and e == 0 for o, e in zip(observed, expected, strict=True)):
        return 0.0
    cells = [(o, e) for o, e in zip(observed, expected, strict=True) if e >= MIN_EXPECTED]
    small = [(o, e) for o, e in zip(observed, expected, strict=True) if 0 < e < MIN_EXPECTED]
    if small:
        cells.append((sum(o for o, _ in small), sum(e for _, e in small)))
    if len(cells) < 2:
        return 1.0
    statistic = sum((o - e) ** 2 / e for o, e in cells)
    # Imported here: scipy.stats is slow to import, and every `raffle` process
    # (the API's, the workers') imports this module through the CLI, for `simulate` only.
    from scipy.stats import chi2

    return float(chi2.sf(statistic, len(cells) - 1))
