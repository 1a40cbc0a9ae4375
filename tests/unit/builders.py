"""Small builders for strategies in tests: rates as text, awards made up on the fly."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from decimal import Decimal

from raffle.domain.awards import Award, AwardKind
from raffle.domain.engine import DrawEngine
from raffle.domain.strategy import Exhaustion, Fallback, Strategy, StrategyPrize

FALLBACK = 1


def strategy(
    rates: Mapping[int, str],
    *,
    stock: Mapping[int, int] | None = None,
    locks: Mapping[int, int] | None = None,
    rules: tuple[tuple[str, str], ...] = (),
    exhaustion: Exhaustion = Exhaustion.FALLBACK,
    fallback: Fallback | None = None,
    strategy_id: int = 7,
) -> Strategy:
    stock, locks = stock or {}, locks or {}
    prizes = tuple(
        StrategyPrize(
            award_id,
            Decimal(rate),
            stock=stock.get(award_id),
            sort=i,
            rules=(("lock", str(locks[award_id])),) if award_id in locks else (),
        )
        for i, (award_id, rate) in enumerate(rates.items())
    )
    return Strategy(strategy_id, prizes, fallback or Fallback(FALLBACK), rules, exhaustion)


def awards(*ids: int, random_points: Mapping[int, str] | None = None) -> dict[int, Award]:
    ranges = random_points or {}
    found = {
        i: Award(i, AwardKind.THANKS if i == FALLBACK else AwardKind.PHYSICAL, f"award {i}")
        for i in (FALLBACK, *ids)
    }
    for i, config in ranges.items():
        found[i] = Award(i, AwardKind.RANDOM_POINTS, f"points {i}", config)
    return found


def engine(rates: Mapping[int, str], **options: object) -> DrawEngine:
    built = strategy(rates, **options)  # type: ignore[arg-type]
    extra = {
        int(x) for rule, value in built.rules if rule == "listed" for x in [value.split(":")[0]]
    }
    return DrawEngine(built, awards(*rates, *extra))


class Sweep:
    """A 'random' source that walks every value below n in order: exhaustive enumeration."""

    def __init__(self) -> None:
        self._next: dict[int, Iterator[int]] = {}

    def below(self, n: int) -> int:
        values = self._next.setdefault(n, iter(range(n)))
        try:
            return next(values)
        except StopIteration:
            self._next[n] = iter(range(n))
            return self.below(n)
