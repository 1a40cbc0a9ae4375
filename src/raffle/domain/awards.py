"""Awards: what a player can win, and how much when the amount is drawn at random."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from raffle.domain.errors import InvalidConfig
from raffle.domain.fulfilment import CONTENT_ID_MAX, check_pool_name


class AwardKind(StrEnum):
    RANDOM_POINTS = "random_points"  # config "lo,hi": points drawn uniformly, inclusive
    POINTS = "points"  # config "n": a fixed number of points
    CHANCES = "chances"  # config: the SKU whose chances are credited
    COUPON = "coupon"  # config: the code pool a code is taken from
    CONTENT = "content"  # config: the paid content opened
    PHYSICAL = "physical"  # config: free text for fulfilment
    THANKS = "thanks"  # nothing is delivered: "thanks for playing"


@dataclass(frozen=True, slots=True)
class Award:
    id: int
    kind: AwardKind
    title: str
    config: str = ""

    def __post_init__(self) -> None:
        if self.kind is AwardKind.RANDOM_POINTS:
            parse_points_range(self.config, path=("config",))
        elif self.kind is AwardKind.POINTS and not self.config.strip().isdigit():
            raise InvalidConfig("points award needs a whole number of points", ("config",))
        elif self.kind is AwardKind.COUPON and (problem := check_pool_name(self.config)):
            raise InvalidConfig(f"a coupon award names its code pool: {problem}", ("config",))
        elif self.kind is AwardKind.CONTENT and not 0 < len(self.config.strip()) <= CONTENT_ID_MAX:
            raise InvalidConfig(
                f"a content award names its content (1-{CONTENT_ID_MAX})", ("config",)
            )

    @property
    def points_range(self) -> tuple[int, int] | None:
        if self.kind is AwardKind.RANDOM_POINTS:
            return parse_points_range(self.config)
        return None


def parse_points_range(text: str, path: tuple[str | int, ...] = ()) -> tuple[int, int]:
    """`"1,100"` -> (1, 100): an inclusive range of non-negative whole points."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise InvalidConfig(f"points range must read 'low,high', got {text!r}", path)
    low, high = int(parts[0]), int(parts[1])
    if low > high:
        raise InvalidConfig(f"points range {text!r} has low above high", path)
    return low, high
