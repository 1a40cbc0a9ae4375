"""Queued draws (seed 000): accepted with a ticket, drawn in acceptance order, read back."""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from raffle.domain.draws import ActivityNotOpen, OutboxMessage
from raffle.domain.errors import Unavailable
from raffle.domain.receipts import Proof
from raffle.domain.tickets import QUEUED, QueueFull, Ticket, UnknownTicket, position
from raffle.service import ids
from raffle.service.catalogue import Catalogue
from raffle.service.contention import retried
from raffle.service.draw_checks import DrawChecks
from raffle.service.fairness import SeedBook
from raffle.service.idempotency import KeyReused
from raffle.service.ports import Broker, Clock, Draw, DrawResult, Shards, UnitOfWork
from raffle.service.receipts import receipt_of

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Queue:
    """How queued draws are taken: `bound` tickets waiting per activity at most, a refusal
    at the bound saying to come back in `retry_after` seconds."""

    bound: int
    retry_after: int


@dataclass(frozen=True, slots=True)
class Queued:
    """A ticket and its place: how many of the activity's tickets go before it, itself
    counted (0 once it is settled)."""

    ticket: Ticket
    position: int
    replayed: bool = False


async def accept(
    cmd: Draw,
    *,
    catalogue: Catalogue,
    config: Callable[[], UnitOfWork],
    broker: Broker,
    clock: Clock,
    queue: Queue,
    checks: DrawChecks | None = None,
    ip: str | None = None,
) -> Queued:
    """A draw accepted into the activity's queue: the ticket is committed (durable) before
    this returns, then published; a publish that fails leaves it to `republish`.

    The player's checks (deny lists, pause, rate limit, join code) run here, in the
    request; the chance and the participation policies when it is drawn. The same
    Idempotency-Key (`cmd.request_key`) answers the same ticket."""
    now = clock.now()
    if checks is not None:
        await checks.player(cmd.user_id, cmd.activity_id, ip)
    activity = await catalogue.activity(cmd.activity_id)
    if not activity.is_open(now):
        raise ActivityNotOpen(f"activity {activity.id} is {activity.state}, not open for draws")
    if checks is not None:
        await checks.activity(activity, cmd.user_id)

    async def numbered() -> Queued:
        async with config() as uow:
            numbers = await uow.tickets.take_number(activity.id, queue.bound)
            if numbers is None:
                full = f"activity {activity.id} has {queue.bound} draws queued"
                raise QueueFull(full, queue.retry_after)
            seq, drawn = numbers
            key = cmd.request_key
            found = None if key is None else await uow.tickets.by_key(cmd.user_id, key)
            if found is not None:
                # Leaving without commit gives the number back.
                if found.activity_id != activity.id:
                    raise KeyReused("this Idempotency-Key was used for a draw in another activity")
                return Queued(found, position(found, drawn), replayed=True)
            ticket = Ticket(new_ticket(), cmd.user_id, activity.id, seq, now, key)
            await uow.tickets.add(ticket)
            await uow.commit()
        return Queued(ticket, position(ticket, drawn))

    # An activity's first tickets taken at once make its counter row; on MariaDB their gap
    # locks may deadlock, and the database drops one: it changed nothing, so it runs again.
    queued = await retried(numbered)
    if queued.replayed:
        return queued
    ticket = queued.ticket
    try:
        await broker.publish(wake_up(ticket, now))
    except Unavailable:
        log.warning("ticket %s not published now; republished later", ticket.ticket)
    return queued


def new_ticket() -> str:
    """128 bits from the CSPRNG: a ticket cannot be guessed (and is checked against its
    owner anyway)."""
    return "t" + secrets.token_hex(16)


def wake_up(ticket: Ticket, now: datetime) -> OutboxMessage:
    """The ticket's message: the consumer draws the activity's tickets up to its number."""
    payload = {"ticket": ticket.ticket, "activity_id": ticket.activity_id, "seq": ticket.seq}
    return OutboxMessage(ids.message_id(), QUEUED, ticket.ticket, json.dumps(payload), now)


async def mine(user_id: str, ticket_id: str, *, config: Callable[[], UnitOfWork]) -> Queued:
    """The player's own ticket and its place; another's is unknown to them."""
    async with config() as uow:
        ticket = await uow.tickets.get(ticket_id)
        drawn = 0 if ticket is None else await uow.tickets.drawn_upto(ticket.activity_id)
    if ticket is None or ticket.user_id != user_id:
        raise UnknownTicket(f"you have no ticket {ticket_id}")
    return Queued(ticket, position(ticket, drawn))


async def result_of(
    ticket: Ticket,
    *,
    shards: Shards,
    config: Callable[[], UnitOfWork],
    catalogue: Catalogue,
    seeds: SeedBook | None,
) -> DrawResult:
    """A drawn ticket's draw, as the draw answered it (its receipt issued again)."""
    assert ticket.order_id is not None, "a drawn ticket names its order"
    async with shards.for_user(ticket.user_id) as uow:
        found = await uow.orders.get(ticket.user_id, ticket.order_id)
    assert found is not None, "a ticket is settled drawn after its draw committed"
    order, win = found
    receipt = None
    if seeds is not None and order.proof is not None:
        async with config() as cuow:
            seed = await cuow.seeds.get(order.activity_id, Proof.from_text(order.proof).period)
        if seed is not None:
            activity = await catalogue.activity(order.activity_id)
            odds = seeds.odds_hash(await catalogue.engine(activity))
            receipt = receipt_of(order, win, seed, odds)
    return DrawResult(
        order.order_id, order.activity_id, win.award_id, win.points, win.rule, order.draw_count,
        order.created_at, receipt=receipt,
    )  # fmt: skip


async def republish(
    config: Callable[[], UnitOfWork], broker: Broker, clock: Clock, *, age: timedelta
) -> int:
    """For each activity with a ticket queued longer than `age` (its publish failed, or its
    message was lost with an embedded broker's process), its last ticket published again:
    that one message drains everything before it. How many were published."""
    now = clock.now()
    async with config() as uow:
        stalled: Sequence[Ticket] = await uow.tickets.stalled(now - age)
    answers = await broker.publish_many([wake_up(t, now) for t in stalled])
    return sum(answer is None for answer in answers)


async def sweep_tickets(
    config: Callable[[], UnitOfWork], clock: Clock, *, keep: timedelta, batch: int
) -> int:
    """Settled tickets (drawn or refused) accepted longer than `keep` ago deleted, `batch` a
    transaction, until none is left; how many. Their draws stay in the orders: a deleted
    ticket polled is `unknown_ticket`, and its Idempotency-Key is long expired."""
    before = clock.now() - keep
    gone = 0
    while True:
        async with config() as uow:
            deleted = await uow.tickets.delete_settled(before, batch)
            await uow.commit()
        gone += deleted
        if deleted < batch:
            return gone
