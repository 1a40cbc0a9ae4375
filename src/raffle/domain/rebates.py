"""Behaviour rebates: a behaviour (signing in, or one an operator reports) grants chances
and/or points, once per user, activity, behaviour and business key."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from raffle.domain.errors import InvalidConfig, RaffleError

SIGN_IN = "sign_in"  # the built-in behaviour; its business key is the day in the activity's zone
BEHAVIOUR = re.compile(r"^[a-z][a-z0-9_.\-]{0,31}$")
MAX_BUSINESS_KEY = 64


class NoRebateRule(RaffleError):
    code = "no_rebate_rule"


class InvalidBehaviour(RaffleError):
    code = "invalid_behaviour"


@dataclass(frozen=True, slots=True)
class RebateRule:
    """What doing `behaviour` in an activity grants: a SKU's chances, points, or both."""

    activity_id: int
    behaviour: str
    sku: int | None = None
    points: int | None = None
    description: str = ""
    enabled: bool = True

    def __post_init__(self) -> None:
        if not BEHAVIOUR.match(self.behaviour):
            raise InvalidConfig(
                "behaviour must be 1-32 lower-case letters, digits, '_', '.' or '-', "
                "starting with a letter",
                ("behaviour",),
            )
        if self.sku is None and self.points is None:
            raise InvalidConfig("a rebate grants a sku, points or both", ("behaviour",))
        if self.points is not None and self.points <= 0:
            raise InvalidConfig("rebate points must be positive", ("points",))


@dataclass(frozen=True, slots=True)
class RebateOrder:
    """The fact that a behaviour was rebated; what it granted is copied from the rule."""

    order_id: str
    user_id: str
    activity_id: int
    behaviour: str
    business_key: str
    sku: int | None
    points: int | None
    created_at: datetime

    @property
    def business_no(self) -> str:
        """The `out_business_no` of the top-up and the points it made: one per rebate."""
        return f"rebate-{self.order_id}"


def check_behaviour(behaviour: str, business_key: str) -> None:
    if not BEHAVIOUR.match(behaviour):
        raise InvalidBehaviour(f"unknown behaviour name {behaviour!r}")
    if not 1 <= len(business_key) <= MAX_BUSINESS_KEY or not business_key.isprintable():
        raise InvalidBehaviour(f"business_key must be 1-{MAX_BUSINESS_KEY} printable characters")


def streak(signed: frozenset[date], today: date) -> int:
    """Consecutive signed days up to today; a streak that reached yesterday still counts
    while today is not signed yet (it breaks only when a whole day is missed)."""
    day = today if today in signed else today - timedelta(days=1)
    count = 0
    while day in signed:
        count += 1
        day -= timedelta(days=1)
    return count
