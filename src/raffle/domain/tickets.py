"""Queued draws (seed 000 排队抽奖): a ticket per accepted draw, drawn in acceptance order."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from raffle.domain.errors import RaffleError, Unavailable

QUEUED = "draw.queued"  # the broker topic of accepted tickets; a message's key is its ticket


class TicketState(StrEnum):
    QUEUED = "queued"  # accepted, not drawn yet: no order, no win exists
    DRAWN = "drawn"  # its draw committed: `order_id` names the order
    REFUSED = "refused"  # its draw was refused (no chances left, activity closed...)


class QueueFull(Unavailable):
    """The activity's queue holds as many tickets as it may: nothing was accepted."""

    code = "queue_full"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class UnknownTicket(RaffleError):
    """No such ticket of this player (another player's is not theirs to see)."""

    code = "unknown_ticket"


@dataclass(frozen=True, slots=True)
class Ticket:
    """An accepted queued draw. `seq` numbers the activity's tickets from 1 in the order
    they were accepted, which is the order they are drawn in."""

    ticket: str  # opaque, from the CSPRNG; also the draw's request key (its idempotency)
    user_id: str
    activity_id: int
    seq: int
    accepted_at: datetime
    request_key: str | None = None  # the player's Idempotency-Key, if sent
    state: TicketState = TicketState.QUEUED
    order_id: str | None = None  # drawn: the raffle order
    refusal: str | None = None  # refused: the error's stable code
    detail: str | None = None  # refused: its message

    def settled(self, outcome: Settled) -> Ticket:
        return Ticket(
            self.ticket, self.user_id, self.activity_id, self.seq, self.accepted_at,
            self.request_key, outcome.state, outcome.order_id, outcome.refusal, outcome.detail,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Settled:
    """What a ticket's draw came to: its order, or why it was refused."""

    ticket: str
    seq: int
    state: TicketState
    order_id: str | None = None
    refusal: str | None = None
    detail: str | None = None


def position(ticket: Ticket, drawn_upto: int) -> int:
    """How many tickets of the activity are drawn before this one, itself counted (1: next);
    0 once it is settled. `drawn_upto` is the last ticket number settled."""
    if ticket.state is not TicketState.QUEUED:
        return 0
    return max(ticket.seq - drawn_upto, 1)
