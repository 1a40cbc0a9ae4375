"""What a draw leaves behind: the raffle order, the win, and the message that delivers it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from raffle.domain.errors import RaffleError


class ActivityNotOpen(RaffleError):
    code = "activity_not_open"


class UnknownActivity(RaffleError):
    code = "unknown_activity"


class OrderState(StrEnum):
    CREATE = "create"
    USED = "used"
    CANCEL = "cancel"


class WinState(StrEnum):
    CREATE = "create"  # recorded, not yet delivered
    COMPLETED = "completed"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class RaffleOrder:
    """One consumed chance. `draw_count` is the user's draws in the activity including it."""

    order_id: str
    user_id: str
    activity_id: int
    strategy_id: int
    draw_count: int
    state: OrderState
    created_at: datetime
    request_key: str | None = None  # the Idempotency-Key it was made under
    policy_id: int | None = None  # the participation policy that admitted it, if any
    # What its receipt needs beyond the order (domain/receipts.py), as JSON: the seed's
    # period, the client seed, whether the user was listed, the engine's trail.
    proof: str | None = None


@dataclass(frozen=True, slots=True)
class Win:
    """The award record: the fact that a user won a prize with an order."""

    order_id: str
    user_id: str
    activity_id: int
    strategy_id: int
    award_id: int
    points: int | None
    rule: str
    created_at: datetime
    state: WinState = WinState.CREATE
    error: DeliveryError | None = None  # why the last delivery attempt failed


@dataclass(frozen=True, slots=True)
class DeliveryError:
    """Why a delivery attempt failed: a stable code (a RaffleError's, else `internal`)
    and a short message, kept on the award record for operators."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class OutboxMessage:
    """An event to relay to the broker, written in the transaction that made it true."""

    message_id: str  # 128-bit, hex
    topic: str
    key: str  # what consumers deduplicate on, e.g. the order id
    payload: str  # JSON
    created_at: datetime
