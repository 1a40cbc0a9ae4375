"""Points ("credit"): a user's balance, and the orders that earn and spend it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from raffle.domain.errors import RaffleError


class InsufficientPoints(RaffleError):
    code = "insufficient_points"


class InvalidPoints(RaffleError):
    code = "invalid_points"


class PointsKind(StrEnum):
    EARN = "earn"
    SPEND = "spend"


@dataclass(frozen=True, slots=True)
class PointsAccount:
    """`total` is every point ever earned; `available` what is left to spend (never < 0)."""

    user_id: str
    total: int = 0
    available: int = 0


@dataclass(frozen=True, slots=True)
class PointsOrder:
    """One change of a balance, applied once per user and `out_business_no`."""

    order_id: str
    user_id: str
    kind: PointsKind
    amount: int  # always positive; `kind` says which way it went
    out_business_no: str
    reason: str
    created_at: datetime

    def __post_init__(self) -> None:
        check_amount(self.amount)
        if not 1 <= len(self.out_business_no) <= MAX_BUSINESS_NO:
            raise InvalidPoints(f"out_business_no must be 1-{MAX_BUSINESS_NO} characters")
        if len(self.reason) > MAX_REASON:
            raise InvalidPoints(f"reason must be at most {MAX_REASON} characters")


MAX_BUSINESS_NO = 64
MAX_REASON = 64


def check_amount(amount: int) -> None:
    if amount <= 0:
        raise InvalidPoints(f"an amount of points must be positive, got {amount}")
