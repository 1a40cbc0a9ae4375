"""A strategy: the published odds table of prizes with rates, stock and rules, and its fallback."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field, replace
from decimal import Decimal
from enum import StrEnum

from raffle.domain.awards import parse_points_range
from raffle.domain.errors import InvalidConfig
from raffle.domain.prize_cards import PrizeCard, grid_problems
from raffle.domain.prize_claims import NO_TERMS, ClaimTerms

RATE_PLACES = 6
RATE_SCALE = 1_000_000  # 10**RATE_PLACES: rates are exact multiples of one in a million

RuleConfig = tuple[tuple[str, str], ...]  # (rule name, rule value), run in this order
# Old names of rules, read as the new: stored strategies and campaign files written before
# the rename still load. `blacklist` is the listed-users rule (a 黑名单 is the deny list).
RENAMED_RULES = {"blacklist": "listed"}


class Exhaustion(StrEnum):
    FALLBACK = "fallback"  # landing on an exhausted prize yields the fallback; odds unchanged
    REDISTRIBUTE = "redistribute"  # exhausted prizes leave the pool; the rest renormalise


@dataclass(frozen=True, slots=True)
class StrategyPrize:
    award_id: int
    rate: Decimal
    stock: int | None = None  # None: unlimited
    sort: int = 0
    rules: RuleConfig = ()  # post-draw rules of this prize, e.g. (("lock", "3"),)
    _: KW_ONLY
    # Stock left at which operators are warned (seed 004 warning_surplus). Not part of the
    # published terms (`Strategy.terms`): it may change while the activity runs.
    warning_surplus: int | None = None
    claim: ClaimTerms = NO_TERMS  # its validity and claim conditions once won
    # A disabled prize is out of the odds: its rate goes to the fallback (seed 004 status).
    enabled: bool = True
    card: PrizeCard = field(default_factory=PrizeCard)  # how it is shown; not the odds

    def __post_init__(self) -> None:
        if not self.rate.is_finite() or self.rate < 0 or self.rate > 1:
            raise InvalidConfig(f"rate must be between 0 and 1, got {self.rate}", ("rate",))
        if self.rate != self.rate.quantize(Decimal(1).scaleb(-RATE_PLACES)):
            raise InvalidConfig(
                f"rate {self.rate} has more than {RATE_PLACES} decimal places", ("rate",)
            )
        if self.stock is not None and self.stock < 0:
            raise InvalidConfig(f"stock must not be negative, got {self.stock}", ("stock",))
        if self.warning_surplus is not None:
            self._check_warning(self.warning_surplus)

    def _check_warning(self, surplus: int) -> None:
        if self.stock is None:
            raise InvalidConfig("a warning needs a stocked prize", ("warning_surplus",))
        if not 0 < surplus < self.stock:
            raise InvalidConfig(
                f"warning_surplus must be between 1 and the stock less one ({self.stock - 1}), "
                f"got {surplus}",
                ("warning_surplus",),
            )

    @property
    def weight(self) -> int:
        """The rate in millionths: an exact integer."""
        return int(self.rate.scaleb(RATE_PLACES))


@dataclass(frozen=True, slots=True)
class Fallback:
    """The luck prize: what a draw yields when it lands on no prize, a locked or an empty one."""

    award_id: int
    points: tuple[int, int] | None = None  # overrides the award's own random range


@dataclass(frozen=True, slots=True)
class Strategy:
    id: int
    prizes: tuple[StrategyPrize, ...]
    fallback: Fallback
    rules: RuleConfig = ()  # pre-draw rules, e.g. (("listed", "100:u1,u2"), ("weight", ...))
    exhaustion: Exhaustion = Exhaustion.FALLBACK
    description: str = ""

    def __post_init__(self) -> None:
        renamed = tuple((RENAMED_RULES.get(name, name), value) for name, value in self.rules)
        names = [name for name, _ in renamed]
        for name in names:
            if names.count(name) > 1:
                old = [
                    f" ({o!r} is its old name)" for o, new in RENAMED_RULES.items() if new == name
                ]
                raise InvalidConfig(f"rule {name!r} is given twice{''.join(old)}", ("rules",))
        object.__setattr__(self, "rules", renamed)  # frozen: set once, as it is built
        seen: set[int] = set()
        for i, prize in enumerate(self.prizes):
            if prize.award_id in seen:
                raise InvalidConfig(f"award {prize.award_id} is listed twice", ("prizes", i))
            seen.add(prize.award_id)
        if cells := grid_problems([p.card for p in self.prizes]):
            raise cells[0]
        total = sum((p.rate for p in self.prizes), Decimal(0))
        if total > 1:
            raise InvalidConfig(f"rates sum to {total.normalize()}, more than 1", ("prizes",))
        fallback = self.prize(self.fallback.award_id)
        if fallback is not None and fallback.stock is not None:
            raise InvalidConfig(
                f"fallback award {fallback.award_id} must have unlimited stock", ("fallback",)
            )

    def prize(self, award_id: int) -> StrategyPrize | None:
        return next((p for p in self.prizes if p.award_id == award_id), None)

    @property
    def remainder(self) -> int:
        """Millionths of probability not given to any enabled prize: they go to the fallback."""
        return RATE_SCALE - sum(p.weight for p in self.prizes if p.enabled)

    def terms(self) -> Strategy:
        """The strategy less its prizes' cards and warning thresholds: what publishing it
        promises, and so what a running activity's freeze compares (a card or a threshold may
        change; the odds may not)."""
        plain = tuple(replace(p, card=PrizeCard(), warning_surplus=None) for p in self.prizes)
        return replace(self, prizes=plain)


def _renamed(rules: RuleConfig) -> RuleConfig:
    """The rules under their current names; a rule given under both names is refused."""
    renamed = tuple((RENAMED_RULES.get(name, name), value) for name, value in rules)
    names = [name for name, _ in renamed]
    for name in names:
        if names.count(name) > 1:
            old = "".join(
                f" ({o!r} is its old name)" for o, n in RENAMED_RULES.items() if n == name
            )
            raise InvalidConfig(f"rule {name!r} is given twice{old}", ("rules",))
    return renamed


def parse_fallback(text: str) -> Fallback:
    """The luck rule as big-market writes it: `"101:1,100"` (award and points) or `"101"`."""
    award_text, sep, points_text = text.partition(":")
    if not award_text.strip().isdigit():
        raise InvalidConfig(f"luck rule must read 'award' or 'award:low,high', got {text!r}")
    points = parse_points_range(points_text) if sep else None
    return Fallback(int(award_text), points)


def format_fallback(fallback: Fallback) -> str:
    if fallback.points is None:
        return str(fallback.award_id)
    return f"{fallback.award_id}:{fallback.points[0]},{fallback.points[1]}"
