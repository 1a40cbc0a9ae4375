"""A user's draws on their shard: raffle orders, wins (award records) and the outbox."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Table,
    and_,
    func,
    or_,
    select,
    update,
)

from raffle.adapters.sql import draw_series
from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.shard_tables import ERROR_MESSAGE_LENGTH, ShardTables
from raffle.adapters.sql.upsert import (
    insert_into,
)
from raffle.domain.delivery import RETRY_STEPS, retry_delay
from raffle.domain.draws import (
    DeliveryError,
    OrderState,
    OutboxMessage,
    RaffleOrder,
    Win,
    WinState,
)


class SqlOrderRepository:
    def __init__(self, connection: SqlConnection, tables: ShardTables) -> None:
        self._connection = connection
        self._orders = tables.raffle_order
        self._wins = tables.award_record

    async def add(self, order: RaffleOrder) -> None:
        row = {
            "order_id": order.order_id,
            "user_id": order.user_id,
            "activity_id": order.activity_id,
            "strategy_id": order.strategy_id,
            "draw_count": order.draw_count,
            "state": order.state.value,
            "request_key": order.request_key,
            "created_at": order.created_at,
        }
        await self._connection.execute(insert_into(self._orders), row)

    def expect(self, user_id: str, request_key: str) -> None:
        """Nothing to do: by_request runs its own statement."""

    async def by_request(self, user_id: str, request_key: str) -> RaffleOrder | None:
        o = self._orders
        query = select(o).where(o.c.user_id == user_id, o.c.request_key == request_key)
        row = (await self._connection.execute(query)).first()
        return None if row is None else _order(row._mapping, o)

    async def per_minute(self, activity_id: int, since: datetime) -> dict[datetime, int]:
        return await draw_series.per_minute(self._connection, self._orders, activity_id, since)

    async def history(
        self, user_id: str, activity_id: int | None, before: str | None, limit: int
    ) -> Sequence[tuple[RaffleOrder, Win]]:
        o, w = self._orders, self._wins
        query = (
            select(o, w)
            .join(w, w.c.order_id == o.c.order_id)
            .where(o.c.user_id == user_id)
            .order_by(o.c.order_id.desc())
            .limit(limit)
        )
        if activity_id is not None:
            query = query.where(o.c.activity_id == activity_id)
        if before is not None:
            query = query.where(o.c.order_id < before)
        rows = await self._connection.execute(query)
        return [(_order(row._mapping, o), _win(row._mapping, w)) for row in rows]


class SqlWinRepository:
    def __init__(self, connection: SqlConnection, tables: ShardTables) -> None:
        self._connection = connection
        self._table = tables.award_record

    async def add(self, win: Win) -> None:
        row = {
            "order_id": win.order_id,
            "user_id": win.user_id,
            "activity_id": win.activity_id,
            "strategy_id": win.strategy_id,
            "award_id": win.award_id,
            "points": win.points,
            "rule": win.rule,
            "state": win.state.value,
            "created_at": win.created_at,
        }
        await self._connection.execute(insert_into(self._table), row)

    async def get(self, order_id: str) -> Win | None:
        w = self._table
        row = (await self._connection.execute(select(w).where(w.c.order_id == order_id))).first()
        return None if row is None else _win(row._mapping, w)

    async def count(self, strategy_id: int, award_id: int) -> int:
        w = self._table
        query = (
            select(func.count())
            .select_from(w)
            .where(w.c.strategy_id == strategy_id, w.c.award_id == award_id)
        )
        return int(await self._connection.scalar(query) or 0)

    async def tally(self, activity_id: int) -> dict[tuple[int, WinState], int]:
        w = self._table
        query = (
            select(w.c.award_id, w.c.state, func.count())
            .where(w.c.activity_id == activity_id)
            .group_by(w.c.award_id, w.c.state)
        )
        rows = await self._connection.execute(query)
        return {(int(award), WinState(state)): int(n) for award, state, n in rows}

    async def present(self, order_ids: Sequence[str]) -> set[str]:
        w = self._table
        query = select(w.c.order_id).where(w.c.order_id.in_(order_ids))
        return set((await self._connection.execute(query)).scalars().all())

    async def settle(self, order_id: str, expected: WinState, new: WinState) -> bool:
        w = self._table
        statement = (
            update(w)
            .where(w.c.order_id == order_id, w.c.state == expected.value)
            .values(state=new.value, **_forgotten(new))
        )
        return (await self._connection.execute(statement)).rowcount == 1

    async def note_error(self, order_id: str, error: DeliveryError | None) -> bool:
        w = self._table
        values = {
            "error_code": None if error is None else error.code[:64],
            "error_message": None if error is None else error.message[:ERROR_MESSAGE_LENGTH],
        }
        statement = (
            update(w)
            .where(w.c.order_id == order_id, w.c.state == WinState.CREATE.value)
            .values(**values)
        )
        return (await self._connection.execute(statement)).rowcount == 1

    async def settle_many(
        self, order_ids: Sequence[str], expected: WinState, new: WinState
    ) -> set[str]:
        # Lock first, in order, then move what was found: UPDATE ... RETURNING would do it
        # in one statement, but MariaDB has no RETURNING on UPDATE.
        w = self._table
        query = (
            select(w.c.order_id)
            .where(w.c.order_id.in_(order_ids), w.c.state == expected.value)
            .order_by(w.c.order_id)
            .with_for_update()
        )
        found = list((await self._connection.execute(query)).scalars().all())
        if found:
            await self._connection.execute(
                update(w).where(w.c.order_id.in_(found)).values(state=new.value, **_forgotten(new))
            )
        return set(found)

    async def in_state(
        self, state: WinState, limit: int, activity_id: int | None = None
    ) -> list[Win]:
        w = self._table
        query = select(w).where(w.c.state == state.value).order_by(w.c.created_at).limit(limit)
        if activity_id is not None:
            query = query.where(w.c.activity_id == activity_id)
        return [_win(row._mapping, w) for row in await self._connection.execute(query)]

    async def states(self) -> dict[WinState, int]:
        w = self._table
        query = select(w.c.state, func.count()).group_by(w.c.state)
        return {WinState(s): n for s, n in await self._connection.execute(query)}


class SqlOutboxRepository:
    def __init__(self, connection: SqlConnection, tables: ShardTables) -> None:
        self._connection = connection
        self._table = tables.outbox

    async def add(self, message: OutboxMessage) -> None:
        row = {
            "message_id": message.message_id,
            "topic": message.topic,
            "message_key": message.key,
            "payload": message.payload,
            "state": "create",
            "attempts": 0,
            "created_at": message.created_at,
            "updated_at": message.created_at,
        }
        await self._connection.execute(insert_into(self._table), row)

    async def claim(
        self, now: datetime, limit: int, stale_before: datetime | None = None
    ) -> list[OutboxMessage]:
        # The claim is its own short transaction: rows locked by another claimer are skipped
        # (SKIP LOCKED; SQLite has one writer and takes turns), and once committed the rows
        # read `sending`, which no relay claims again. So no lock is held across a slow
        # publish, and two relays never publish one row at once unless the compensation job
        # finds it still `sending` after its age (a relay that died), which must exceed the
        # publish timeout.
        t = self._table
        due = _stale(t, stale_before) if stale_before is not None else _due(t, now)
        query = (
            select(t)
            .where(due)
            .order_by(t.c.updated_at)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        rows = (await self._connection.execute(query)).all()
        if not rows:
            return []
        ids = [row.message_id for row in rows]
        await self._connection.execute(
            update(t)
            .where(t.c.message_id.in_(ids))
            .values(state="sending", attempts=t.c.attempts + 1, updated_at=now)
        )
        return [
            OutboxMessage(row.message_id, row.topic, row.message_key, row.payload, row.created_at)
            for row in rows
        ]

    async def mark(self, message_ids: Sequence[str], published: bool, now: datetime) -> None:
        t = self._table
        state = "published" if published else "failed"
        await self._connection.execute(
            update(t)
            .where(t.c.message_id.in_(message_ids), t.c.state == "sending")
            .values(state=state, updated_at=now)
        )

    async def unpublished(self, before: datetime) -> int:
        t = self._table
        query = (
            select(func.count())
            .select_from(t)
            .where(t.c.state != "published", t.c.created_at < before)
        )
        return int(await self._connection.scalar(query) or 0)

    async def states(self) -> dict[str, int]:
        t = self._table
        query = select(t.c.state, func.count()).group_by(t.c.state)
        return {str(row[0]): int(row[1]) for row in await self._connection.execute(query)}


def _due(t: Table, now: datetime) -> ColumnElement[bool]:
    """New messages, and failed ones whose backoff after their attempts has passed."""

    def waited(attempts: int) -> ColumnElement[bool]:
        return t.c.updated_at <= now - timedelta(seconds=retry_delay(attempts))

    retries = [and_(t.c.attempts == n, waited(n)) for n in range(1, RETRY_STEPS)]
    retries.append(and_(t.c.attempts >= RETRY_STEPS, waited(RETRY_STEPS)))
    return or_(t.c.state == "create", and_(t.c.state == "failed", or_(*retries)))


def _stale(t: Table, before: datetime) -> ColumnElement[bool]:
    return and_(t.c.state != "published", t.c.updated_at < before)


# Rows are read by column object: an order joined with its win has two of each of
# user_id, activity_id, strategy_id, state and created_at.


def _order(row: Mapping[Any, Any], o: Table) -> RaffleOrder:
    return RaffleOrder(
        order_id=row[o.c.order_id],
        user_id=row[o.c.user_id],
        activity_id=row[o.c.activity_id],
        strategy_id=row[o.c.strategy_id],
        draw_count=row[o.c.draw_count],
        state=OrderState(row[o.c.state]),
        created_at=row[o.c.created_at],
        request_key=row[o.c.request_key],
    )


def _forgotten(new: WinState) -> dict[str, None]:
    """A completed delivery has no failure to tell: the last error is cleared with it."""
    return {"error_code": None, "error_message": None} if new is WinState.COMPLETED else {}


def _win(row: Mapping[Any, Any], w: Table) -> Win:
    return Win(
        order_id=row[w.c.order_id],
        user_id=row[w.c.user_id],
        activity_id=row[w.c.activity_id],
        strategy_id=row[w.c.strategy_id],
        award_id=row[w.c.award_id],
        points=row[w.c.points],
        rule=row[w.c.rule],
        created_at=row[w.c.created_at],
        state=WinState(row[w.c.state]),
        error=(
            None
            if row[w.c.error_code] is None
            else DeliveryError(row[w.c.error_code], row[w.c.error_message] or "")
        ),
    )
