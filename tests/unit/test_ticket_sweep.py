"""The ticket sweep on fakes: settled tickets past the retention deleted a batch a
transaction, queued and recent ones kept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, cast

from raffle.domain.tickets import Ticket, TicketState
from raffle.service.queued_draws import sweep_tickets
from tests.unit.fakes import FakeClock

NOW = datetime(2026, 11, 25, 8, tzinfo=UTC)
KEEP = timedelta(days=7)


class FakeTickets:
    def __init__(self, tickets: list[Ticket]) -> None:
        self.rows = {t.ticket: t for t in tickets}
        self.batches: list[int] = []  # the deletes each transaction committed

    async def delete_settled(self, before: datetime, limit: int) -> int:
        old = [
            t.ticket
            for t in self.rows.values()
            if t.state is not TicketState.QUEUED and t.accepted_at < before
        ][:limit]
        for ticket in old:
            del self.rows[ticket]
        self.batches.append(len(old))
        return len(old)


class FakeConfig:
    def __init__(self, tickets: FakeTickets) -> None:
        self.tickets = tickets
        self.commits = 0

    async def __aenter__(self) -> FakeConfig:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType
    ) -> None:
        return None

    async def commit(self) -> None:
        self.commits += 1


def _ticket(n: int, state: TicketState, age: timedelta) -> Ticket:
    return Ticket(f"t{n}", "u", 1, n, NOW - age, state=state)


async def test_settled_tickets_past_the_retention_go_in_bounded_batches() -> None:
    old = [_ticket(n, TicketState.DRAWN, KEEP + timedelta(hours=1)) for n in range(1, 6)]
    old.append(_ticket(6, TicketState.REFUSED, KEEP + timedelta(seconds=1)))
    kept = [
        _ticket(7, TicketState.QUEUED, KEEP * 2),  # waiting still, however old
        _ticket(8, TicketState.DRAWN, KEEP - timedelta(seconds=1)),  # not old enough
    ]
    tickets = FakeTickets(old + kept)
    config = FakeConfig(tickets)

    gone = await sweep_tickets(cast(Any, lambda: config), FakeClock(NOW), keep=KEEP, batch=4)

    assert gone == 6
    assert set(tickets.rows) == {"t7", "t8"}
    assert tickets.batches == [4, 2]  # a short batch ends the run
    assert config.commits == 2


async def test_nothing_to_sweep_is_one_empty_batch() -> None:
    tickets = FakeTickets([_ticket(1, TicketState.QUEUED, KEEP * 3)])
    gone = await sweep_tickets(
        cast(Any, lambda: FakeConfig(tickets)), FakeClock(NOW), keep=KEEP, batch=4
    )
    assert (gone, list(tickets.rows), tickets.batches) == (0, ["t1"], [0])
