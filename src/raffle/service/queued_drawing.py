"""The queued draws' consumer: an activity's tickets drawn one after another, in order."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from raffle.domain.draws import OutboxMessage
from raffle.domain.errors import RaffleError, Unavailable
from raffle.domain.tickets import Settled, Ticket, TicketState
from raffle.service.ports import Draw, DrawResult, UnitOfWork

DrawOne = Callable[[Draw], Awaitable[DrawResult]]


@dataclass(eq=False)
class TicketDrawer:
    """A message handler: a ticket's message returns once every ticket of its activity up
    to it is settled (a message's ack comes after the draws' commits); the messages are
    the queue's wake-ups, the tickets themselves are read in number order.

    The tickets are read from the database in number order and drawn one at a time through
    the one draw use case (`draw`), each with its ticket as the request key: a ticket drawn
    before a crash, but not yet settled, replays its committed order instead of drawing
    again. One drain per activity at a time in this process (on RabbitMQ the queue has a
    single active consumer); the messages arriving meanwhile wait for it."""

    config: Callable[[], UnitOfWork]
    draw: DrawOne
    batch: int
    _locks: dict[int, asyncio.Lock] = field(default_factory=dict)
    _settled: dict[int, int] = field(default_factory=dict)  # activity -> last number settled

    async def handle(self, message: OutboxMessage) -> None:
        wake = json.loads(message.payload)
        activity_id, seq = int(wake["activity_id"]), int(wake["seq"])
        if self._settled.get(activity_id, 0) >= seq:
            return
        lock = self._locks.setdefault(activity_id, asyncio.Lock())
        async with lock:
            if self._settled.get(activity_id, 0) < seq:
                await self._drain(activity_id, seq)

    async def _drain(self, activity_id: int, seq: int) -> None:
        """The activity's queued tickets by batches, until the one numbered `seq` is settled
        (the next message waiting goes on): tickets commit in number order
        (ports/tickets.py), so none is found before one numbered lower."""
        while self._settled.get(activity_id, 0) < seq:
            async with self.config() as uow:
                tickets = await uow.tickets.waiting(activity_id, self.batch)
            if not tickets:
                # Ours was settled by another consumer before (at a redelivery).
                self._settled[activity_id] = max(self._settled.get(activity_id, 0), seq)
                return
            outcomes: list[Settled] = []
            try:
                for ticket in tickets:
                    outcomes.append(await self._draw(ticket))
            except Exception:  # what was drawn is settled, then the message goes back
                await self._settle(activity_id, outcomes)
                raise
            await self._settle(activity_id, outcomes)

    async def _settle(self, activity_id: int, outcomes: list[Settled]) -> None:
        if not outcomes:
            return
        async with self.config() as uow:
            await uow.tickets.settle(activity_id, outcomes)
            await uow.commit()
        self._settled[activity_id] = outcomes[-1].seq

    async def _draw(self, ticket: Ticket) -> Settled:
        try:
            result = await self.draw(Draw(ticket.user_id, ticket.activity_id, ticket.ticket))
        except Unavailable:
            raise  # not the ticket's doing: the message goes back, and it is drawn again
        except RaffleError as refused:
            return Settled(
                ticket.ticket, ticket.seq, TicketState.REFUSED,
                refusal=refused.code, detail=refused.message,
            )  # fmt: skip
        return Settled(ticket.ticket, ticket.seq, TicketState.DRAWN, order_id=result.order_id)
