"""Draw chances: quota packs, SKUs that sell them, and a user's quota account."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from raffle.domain.errors import InvalidConfig, RaffleError


class NoChances(RaffleError):
    code = "no_chances"


class SkuSoldOut(RaffleError):
    code = "sku_sold_out"


@dataclass(frozen=True, slots=True)
class QuotaPack:
    """Chances a top-up adds: to the total, to each day's allowance, to each month's."""

    id: int
    total: int
    day: int
    month: int

    def __post_init__(self) -> None:
        if min(self.total, self.day, self.month) < 0:
            raise InvalidConfig("quota counts must not be negative")

    @property
    def chances(self) -> int:
        """Draws an account opened with this pack alone allows at once."""
        return min(self.total, self.day, self.month)


@dataclass(frozen=True, slots=True)
class Sku:
    """A sellable combination: an activity, a quota pack, a stock, a price in points."""

    sku: int
    activity_id: int
    pack_id: int
    stock: int
    price_points: int = 0

    def __post_init__(self) -> None:
        if self.stock < 0 or self.price_points < 0:
            raise InvalidConfig("stock and price must not be negative")


@dataclass(frozen=True, slots=True)
class TopUpOrder:
    """A pack credited to a user: once per user and `out_business_no`."""

    order_id: str
    user_id: str
    activity_id: int
    sku: int
    out_business_no: str
    pack: QuotaPack
    at: datetime


@dataclass(frozen=True, slots=True)
class QuotaAccount:
    """A user's chances in one activity. `total` is every chance ever credited; `day` and
    `month` are allowances per calendar day and month of the activity's time zone."""

    user_id: str
    activity_id: int
    total: int
    total_left: int
    day: int
    day_left: int
    month: int
    month_left: int

    @property
    def draws(self) -> int:
        """Chances used so far: the user's draw count in the activity."""
        return self.total - self.total_left

    @property
    def chances(self) -> int:
        """Draws possible right now: the tightest of the three limits."""
        return max(0, min(self.total_left, self.day_left, self.month_left))
