"""The queued draws' tickets and each activity's queue counters (configuration database)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from raffle.domain.tickets import Settled, Ticket


class TicketRepository(Protocol):
    async def take_number(self, activity_id: int, bound: int) -> tuple[int, int] | None:
        """The activity's next ticket number and the last one settled, its counter row held
        until the transaction ends (acceptances of one activity take turns, so tickets
        commit in number order); None (nothing taken) when `bound` tickets are waiting."""
        ...

    async def add(self, ticket: Ticket) -> None: ...

    async def get(self, ticket: str) -> Ticket | None: ...

    async def by_key(self, user_id: str, request_key: str) -> Ticket | None:
        """The user's ticket accepted with this Idempotency-Key."""
        ...

    async def drawn_upto(self, activity_id: int) -> int:
        """The number of the activity's last ticket settled (0: none)."""
        ...

    async def waiting(self, activity_id: int, limit: int) -> Sequence[Ticket]:
        """The first `limit` of the activity's queued tickets, in number order."""
        ...

    async def settle(self, activity_id: int, outcomes: Sequence[Settled]) -> None:
        """The tickets' outcomes recorded (in number order); the activity's last settled
        number moved up to the last of them."""
        ...

    async def stalled(self, before: datetime) -> Sequence[Ticket]:
        """Per activity with a ticket queued since before `before`, its last queued ticket."""
        ...

    async def delete_settled(self, before: datetime, limit: int) -> int:
        """Up to `limit` settled tickets (drawn or refused) accepted before `before` deleted;
        how many."""
        ...
