"""Queued draws' tickets in SQL: numbers taken under the activity's counter row lock."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row, bindparam, delete, func, select, update

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_ignore
from raffle.adapters.sql.tables.tickets import draw_ticket, ticket_queue
from raffle.domain.tickets import Settled, Ticket, TicketState


class SqlTicketRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def take_number(self, activity_id: int, bound: int) -> tuple[int, int] | None:
        if (numbers := await self._take(activity_id, bound)) is not None:
            return numbers
        # The activity's first ticket (or a full queue): its counter row made if missing,
        # which waits for one made meanwhile to commit, then taken again.
        row = {"activity_id": activity_id, "accepted": 0, "drawn": 0}
        await self._connection.execute(insert_ignore(self._connection.dialect, ticket_queue, row))
        return await self._take(activity_id, bound)

    async def _take(self, activity_id: int, bound: int) -> tuple[int, int] | None:
        """The update takes the row lock, then reads the bound under it; where the database
        can (PostgreSQL, SQLite), its answer is the new numbers, one round trip."""
        c = ticket_queue.c
        taking = (
            update(ticket_queue)
            .where(c.activity_id == activity_id, c.accepted - c.drawn < bound)
            .values(accepted=c.accepted + 1)
        )
        if self._connection.dialect.update_returning:
            row = (await self._connection.execute(taking.returning(c.accepted, c.drawn))).first()
            return None if row is None else (int(row.accepted), int(row.drawn))
        if not (await self._connection.execute(taking)).rowcount:
            return None
        query = select(c.accepted, c.drawn).where(c.activity_id == activity_id)
        accepted, drawn = (await self._connection.execute(query)).one()
        return int(accepted), int(drawn)

    async def add(self, ticket: Ticket) -> None:
        await self._connection.execute(draw_ticket.insert().values(_row(ticket)))

    async def get(self, ticket: str) -> Ticket | None:
        query = select(draw_ticket).where(draw_ticket.c.ticket == ticket)
        row = (await self._connection.execute(query)).first()
        return None if row is None else _ticket(row)

    async def by_key(self, user_id: str, request_key: str) -> Ticket | None:
        c = draw_ticket.c
        query = select(draw_ticket).where(c.user_id == user_id, c.request_key == request_key)
        row = (await self._connection.execute(query)).first()
        return None if row is None else _ticket(row)

    async def drawn_upto(self, activity_id: int) -> int:
        query = select(ticket_queue.c.drawn).where(ticket_queue.c.activity_id == activity_id)
        return int((await self._connection.execute(query)).scalar() or 0)

    async def waiting(self, activity_id: int, limit: int) -> Sequence[Ticket]:
        c = draw_ticket.c
        query = (
            select(draw_ticket)
            .where(c.activity_id == activity_id, c.state == TicketState.QUEUED)
            .order_by(c.seq)
            .limit(limit)
        )
        return [_ticket(r) for r in await self._connection.execute(query)]

    async def settle(self, activity_id: int, outcomes: Sequence[Settled]) -> None:
        if not outcomes:
            return
        c = draw_ticket.c
        settling = (
            update(draw_ticket)
            .where(c.ticket == bindparam("b_ticket"), c.state == TicketState.QUEUED)
            .values(
                state=bindparam("b_state"),
                order_id=bindparam("b_order_id"),
                refusal=bindparam("b_refusal"),
                detail=bindparam("b_detail"),
            )
        )
        rows = [
            {
                "b_ticket": o.ticket,
                "b_state": o.state.value,
                "b_order_id": o.order_id,
                "b_refusal": o.refusal,
                "b_detail": o.detail,
            }
            for o in outcomes
        ]
        await self._connection.execute(settling, rows)  # one statement, many rows
        last = max(o.seq for o in outcomes)
        q = ticket_queue.c
        await self._connection.execute(
            update(ticket_queue)
            .where(q.activity_id == activity_id, q.drawn < last)
            .values(drawn=last)
        )

    async def stalled(self, before: datetime) -> Sequence[Ticket]:
        c = draw_ticket.c
        last = (
            select(c.activity_id, func.max(c.seq).label("seq"))
            .where(c.state == TicketState.QUEUED, c.accepted_at < before)
            .group_by(c.activity_id)
            .subquery()
        )
        query = select(draw_ticket).join(
            last, (c.activity_id == last.c.activity_id) & (c.seq == last.c.seq)
        )
        return [_ticket(r) for r in await self._connection.execute(query)]

    async def delete_settled(self, before: datetime, limit: int) -> int:
        # The ids first, then the delete: DELETE ... LIMIT is not portable, and a bounded
        # delete holds its locks briefly. The (state, accepted_at) index finds them.
        c = draw_ticket.c
        settled = (TicketState.DRAWN.value, TicketState.REFUSED.value)
        query = select(c.ticket).where(c.state.in_(settled), c.accepted_at < before).limit(limit)
        found = list((await self._connection.execute(query)).scalars())
        if not found:
            return 0
        gone = await self._connection.execute(
            delete(draw_ticket).where(c.ticket.in_(found), c.state.in_(settled))
        )
        return int(gone.rowcount)


def _row(t: Ticket) -> dict[str, Any]:
    return {
        "ticket": t.ticket,
        "activity_id": t.activity_id,
        "seq": t.seq,
        "user_id": t.user_id,
        "request_key": t.request_key,
        "accepted_at": t.accepted_at,
        "state": t.state.value,
        "order_id": t.order_id,
        "refusal": t.refusal,
        "detail": t.detail,
    }


def _ticket(row: Row[Any]) -> Ticket:
    return Ticket(
        row.ticket, row.user_id, row.activity_id, row.seq, row.accepted_at, row.request_key,
        TicketState(row.state), row.order_id, row.refusal, row.detail,
    )  # fmt: skip
