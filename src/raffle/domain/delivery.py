"""Delivering a win: what a deliverer is handed, and why a delivery cannot go ahead."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from raffle.domain.awards import Award
from raffle.domain.errors import RaffleError

WON = "award.won"  # the outbox topic of a win; its key is the order id


class NotDeliverable(RaffleError):
    """No deliverer is wired for the award's kind, or the award is gone: retrying cannot
    help, so the message ends in the dead-letter queue and the record is marked failed."""

    code = "not_deliverable"


class UnknownWin(RaffleError):
    code = "unknown_win"


class NotFailed(RaffleError):
    """Only a delivery that failed can be sent again."""

    code = "delivery_not_failed"


@dataclass(frozen=True, slots=True)
class Grant:
    """One win to deliver, as its `award.won` message tells it."""

    order_id: str  # the unique key of the delivery: each order is delivered once
    user_id: str
    activity_id: int
    award: Award
    points: int | None  # drawn for RANDOM_POINTS
    won_at: datetime
    message_id: str


def retry_delay(attempts: int) -> float:
    """Seconds to wait before publishing a message again after `attempts` tries that the
    broker did not confirm: 0.5 s doubling up to a minute, so a broker that is down is not
    hammered and one that is back is used within a minute."""
    return float(min(0.5 * 2 ** max(attempts - 1, 0), 60.0))


RETRY_STEPS = 9  # retry_delay reaches its cap at this many attempts
