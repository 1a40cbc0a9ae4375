"""The queued draws' consumer on fakes: tickets drawn one after another in number order,
refusals settled with their code, a draw that cannot run now settles those before it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, cast

import pytest

from raffle.domain.draws import OutboxMessage
from raffle.domain.errors import Unavailable
from raffle.domain.quota import NoChances
from raffle.domain.tickets import Settled, Ticket, TicketState, position
from raffle.service.ports import Draw, DrawResult
from raffle.service.queued_drawing import TicketDrawer
from raffle.service.queued_draws import wake_up

AT = datetime(2026, 11, 25, tzinfo=UTC)


class FakeTickets:
    def __init__(self, tickets: Sequence[Ticket]) -> None:
        self.rows = {t.ticket: t for t in tickets}
        self.drawn = 0

    async def waiting(self, activity_id: int, limit: int) -> list[Ticket]:
        queued = [t for t in self.rows.values() if t.state is TicketState.QUEUED]
        return sorted(queued, key=lambda t: t.seq)[:limit]

    async def settle(self, activity_id: int, outcomes: Sequence[Settled]) -> None:
        for o in outcomes:
            self.rows[o.ticket] = self.rows[o.ticket].settled(o)
        self.drawn = max(self.drawn, *(o.seq for o in outcomes))


class FakeConfig:
    def __init__(self, tickets: FakeTickets) -> None:
        self.tickets = tickets

    async def __aenter__(self) -> FakeConfig:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType
    ) -> None:
        return None

    async def commit(self) -> None:
        return None


def _tickets(users: Sequence[str]) -> list[Ticket]:
    return [Ticket(f"t{n}", user, 1, n, AT) for n, user in enumerate(users, start=1)]


def _drawer(tickets: FakeTickets, draw: Any, batch: int = 2) -> TicketDrawer:
    return TicketDrawer(cast(Any, lambda: FakeConfig(tickets)), draw, batch)


def _result(cmd: Draw) -> DrawResult:
    return DrawResult(f"o-{cmd.request_key}", cmd.activity_id, 2, None, "default", 1, AT)


async def test_tickets_are_drawn_one_at_a_time_in_number_order_with_their_key() -> None:
    tickets = FakeTickets(_tickets(["a", "b", "a", "c", "b"]))
    drawn: list[str | None] = []
    running = [0]

    async def draw(cmd: Draw) -> DrawResult:
        running[0] += 1
        assert running[0] == 1  # never two at once
        await asyncio.sleep(0)
        drawn.append(cmd.request_key)
        running[0] -= 1
        return _result(cmd)

    drawer = _drawer(tickets, draw)
    last = tickets.rows["t5"]
    # Every message at once, the last first: the tickets still go in number order.
    messages = [wake_up(t, AT) for t in reversed(list(tickets.rows.values()))]
    await asyncio.gather(*(drawer.handle(m) for m in messages))
    assert drawn == ["t1", "t2", "t3", "t4", "t5"]
    assert tickets.drawn == last.seq
    assert {t.order_id for t in tickets.rows.values()} == {f"o-t{n}" for n in range(1, 6)}


async def test_a_refused_draw_is_settled_with_its_code_and_the_drain_goes_on() -> None:
    tickets = FakeTickets(_tickets(["a", "b"]))

    async def draw(cmd: Draw) -> DrawResult:
        if cmd.user_id == "a":
            raise NoChances("no chances left in activity 1")
        return _result(cmd)

    await _drawer(tickets, draw).handle(wake_up(tickets.rows["t2"], AT))
    first, second = tickets.rows["t1"], tickets.rows["t2"]
    assert (first.state, first.refusal, first.order_id) == (TicketState.REFUSED, "no_chances", None)
    assert (second.state, second.order_id) == (TicketState.DRAWN, "o-t2")


async def test_a_draw_that_cannot_run_now_fails_the_message_after_settling_those_before() -> None:
    tickets = FakeTickets(_tickets(["a", "b", "c"]))

    async def draw(cmd: Draw) -> DrawResult:
        if cmd.user_id == "b":
            raise Unavailable("the database did not answer")
        return _result(cmd)

    with pytest.raises(Unavailable):
        await _drawer(tickets, draw, batch=3).handle(wake_up(tickets.rows["t3"], AT))
    states = [tickets.rows[f"t{n}"].state for n in (1, 2, 3)]
    assert states == [TicketState.DRAWN, TicketState.QUEUED, TicketState.QUEUED]
    assert tickets.drawn == 1


async def test_a_message_of_a_ticket_settled_before_is_acknowledged_without_drawing() -> None:
    tickets = FakeTickets(_tickets(["a"]))

    async def draw(cmd: Draw) -> DrawResult:
        return _result(cmd)

    drawer = _drawer(tickets, draw)
    message = wake_up(tickets.rows["t1"], AT)
    await drawer.handle(message)

    async def never(cmd: Draw) -> DrawResult:
        raise AssertionError("drawn twice")

    await _drawer(tickets, never).handle(message)  # another process, at a redelivery
    assert json.loads(message.payload) == {"ticket": "t1", "activity_id": 1, "seq": 1}
    assert isinstance(message, OutboxMessage)
    assert message.key == "t1"


def test_a_queued_tickets_position_counts_those_before_it_and_itself() -> None:
    ticket = Ticket("t7", "a", 1, 7, AT)
    assert position(ticket, 0) == 7
    assert position(ticket, 6) == 1
    settled = ticket.settled(Settled("t7", 7, TicketState.DRAWN, order_id="o"))
    assert position(settled, 7) == 0
