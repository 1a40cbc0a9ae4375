"""Exact weighted sampling: Walker/Vose alias tables over integer weights, O(1) per draw."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from functools import reduce
from math import gcd

from raffle.domain.randomness import RandomSource


class AliasTable:
    """Draws an outcome with probability exactly weight / total.

    Weights are integers, so nothing is rounded: column `c` of `n` columns holds `width`
    units, `threshold[c]` of them for `ids[c]` and the rest for `aliases[c]`. One uniform
    integer below `n * width` picks a column and a unit at once.
    """

    __slots__ = ("_aliases", "_ids", "_span", "_thresholds", "_width")

    def __init__(self, weights: Mapping[int, int]) -> None:
        positive = {k: w for k, w in weights.items() if w > 0}
        if any(w < 0 for w in weights.values()):
            raise ValueError("weights must not be negative")
        if not positive:
            raise ValueError("an alias table needs at least one positive weight")
        common = reduce(gcd, positive.values())
        ids = list(positive)
        n = len(ids)
        width = sum(positive.values()) // common
        scaled = [n * positive[k] // common for k in ids]
        thresholds = [width] * n
        aliases = list(range(n))
        small = [i for i, s in enumerate(scaled) if s < width]
        large = [i for i, s in enumerate(scaled) if s >= width]
        while small and large:
            lo, hi = small.pop(), large.pop()
            thresholds[lo], aliases[lo] = scaled[lo], hi
            scaled[hi] -= width - scaled[lo]
            (small if scaled[hi] < width else large).append(hi)
        self._ids = ids
        self._aliases = [ids[a] for a in aliases]
        self._thresholds = thresholds
        self._width = width
        self._span = n * width

    def sample(self, rng: RandomSource) -> int:
        column, unit = divmod(rng.below(self._span), self._width)
        if unit < self._thresholds[column]:
            return self._ids[column]
        return self._aliases[column]

    def masses(self) -> dict[int, Fraction]:
        """The exact probability of each outcome, read back from the columns."""
        units = dict.fromkeys(self._ids, 0)
        for own, alias, threshold in zip(self._ids, self._aliases, self._thresholds, strict=True):
            units[own] += threshold
            units[alias] += self._width - threshold
        return {k: Fraction(u, self._span) for k, u in units.items()}

    def __len__(self) -> int:
        return len(self._ids)
