"""Queued draws' tickets on each database: numbers without gaps under concurrent acceptances,
the bound, keys, waiting tickets in order, settling, the stalled ones, the sweep of old settled
ones; migration 0027."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from sqlalchemy import inspect
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.migrate import downgrade, upgrade
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.tickets import Settled, Ticket, TicketState
from raffle.service.contention import retried
from raffle.service.queued_draws import sweep_tickets

AT = datetime(2026, 11, 25, 6, tzinfo=UTC)


async def _accept(engine: AsyncEngine, activity: int, user: str, bound: int = 1000) -> int | None:
    """As queued_draws.accept takes a number: a transaction the database dropped to break a
    deadlock (MariaDB's, as an activity's first tickets make its counter row) runs again."""

    async def once() -> int | None:
        async with SqlUnitOfWork(engine) as uow:
            numbers = await uow.tickets.take_number(activity, bound)
            if numbers is None:
                return None
            seq, _ = numbers
            await uow.tickets.add(
                Ticket(f"t{activity}-{seq}", user, activity, seq, AT, f"k{activity}-{seq}")
            )
            await uow.commit()
        return seq

    return await retried(once)


async def test_concurrent_acceptances_take_every_number_once_up_to_the_bound(
    engine: AsyncEngine,
) -> None:
    numbers = await asyncio.gather(*(_accept(engine, 1, f"u{n}", bound=30) for n in range(40)))
    taken = sorted(n for n in numbers if n is not None)
    assert taken == list(range(1, 31))  # ten refused at the bound, nothing else
    assert await _accept(engine, 2, "u0") == 1  # each activity counts its own
    async with SqlUnitOfWork(engine) as uow:
        first = await uow.tickets.waiting(1, 5)
        assert [t.seq for t in first] == [1, 2, 3, 4, 5]
        found = await uow.tickets.by_key(first[0].user_id, "k1-1")
        assert found is not None
        assert found.ticket == "t1-1"
        await uow.tickets.settle(
            1,
            [
                Settled("t1-1", 1, TicketState.DRAWN, order_id="o1"),
                Settled("t1-2", 2, TicketState.REFUSED, refusal="no_chances", detail="none"),
            ],
        )
        await uow.commit()
    async with SqlUnitOfWork(engine) as uow:
        assert await uow.tickets.drawn_upto(1) == 2
        assert [t.seq for t in await uow.tickets.waiting(1, 2)] == [3, 4]
        drawn, refused = await uow.tickets.get("t1-1"), await uow.tickets.get("t1-2")
        stalled = await uow.tickets.stalled(AT + timedelta(seconds=1))
        assert await uow.tickets.stalled(AT) == []
    assert drawn is not None
    assert (drawn.state, drawn.order_id) == (TicketState.DRAWN, "o1")
    assert refused is not None
    assert (refused.refusal, refused.detail) == ("no_chances", "none")
    assert {(t.activity_id, t.seq) for t in stalled} == {(1, 30), (2, 1)}
    # Settled, two places free up below the bound.
    assert await _accept(engine, 1, "u99", bound=30) == 31


class Clock:
    def now(self) -> datetime:
        return AT + timedelta(days=8)


async def test_the_sweep_deletes_settled_tickets_past_the_retention_a_batch_at_a_time(
    engine: AsyncEngine,
) -> None:
    for n in range(7):
        await _accept(engine, 1, f"u{n}")
    async with SqlUnitOfWork(engine) as uow:
        # Tickets 1-5 settled, 6 and 7 still queued.
        await uow.tickets.settle(
            1, [Settled(f"t1-{n}", n, TicketState.DRAWN, order_id=f"o{n}") for n in range(1, 5)]
        )
        await uow.tickets.settle(1, [Settled("t1-5", 5, TicketState.REFUSED, refusal="x")])
        await uow.commit()

    def config() -> SqlUnitOfWork:
        return SqlUnitOfWork(engine)

    # Accepted 8 days ago: kept for 9 days, none goes; for 7, the five settled go, 2 a batch.
    assert await sweep_tickets(config, Clock(), keep=timedelta(days=9), batch=2) == 0
    assert await sweep_tickets(config, Clock(), keep=timedelta(days=7), batch=2) == 5
    async with SqlUnitOfWork(engine) as uow:
        left = [await uow.tickets.get(f"t1-{n}") for n in range(1, 8)]
        waiting = await uow.tickets.waiting(1, 10)
        drawn = await uow.tickets.drawn_upto(1)
    assert [t is None for t in left] == [True] * 5 + [False] * 2
    assert [t.seq for t in waiting] == [6, 7]
    assert drawn == 5  # the counter is untouched: numbers go on from where they were
    assert await _accept(engine, 1, "u8") == 8


async def test_0027_undoes_itself(database_url: str) -> None:
    await upgrade(database_url)
    await downgrade(database_url, "0026")
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            names = await connection.run_sync(lambda c: inspect(c).get_table_names())
            columns = await connection.run_sync(
                lambda c: [col["name"] for col in inspect(c).get_columns("activity")]
            )
    finally:
        await engine.dispose()
    assert not {"draw_ticket", "ticket_queue"} & set(names)
    assert "queued" not in columns
    await upgrade(database_url)
