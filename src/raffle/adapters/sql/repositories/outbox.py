"""The outbox on each shard: messages written with the draw that raised them, claimed by
the relay, marked published or failed (and retried after a backoff)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, Table, and_, func, or_, select, update

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_into
from raffle.adapters.sql.tables.shard import ShardTables
from raffle.domain.delivery import RETRY_STEPS, retry_delay
from raffle.domain.draws import OutboxMessage


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

    async def backlog(self) -> tuple[int, datetime | None]:
        t = self._table
        # By state, not `<> 'published'`: the (state, updated_at) index finds them.
        query = select(func.count(), func.min(t.c.created_at)).where(t.c.state.in_(_BACKLOG))
        count, oldest = (await self._connection.execute(query)).one()
        return int(count), oldest

    async def states(self) -> dict[str, int]:
        t = self._table
        query = select(t.c.state, func.count()).group_by(t.c.state)
        return {str(row[0]): int(row[1]) for row in await self._connection.execute(query)}


_BACKLOG = ("create", "sending", "failed")  # every state but published


def _due(t: Table, now: datetime) -> ColumnElement[bool]:
    """New messages, and failed ones whose backoff after their attempts has passed."""

    def waited(attempts: int) -> ColumnElement[bool]:
        return t.c.updated_at <= now - timedelta(seconds=retry_delay(attempts))

    retries = [and_(t.c.attempts == n, waited(n)) for n in range(1, RETRY_STEPS)]
    retries.append(and_(t.c.attempts >= RETRY_STEPS, waited(RETRY_STEPS)))
    return or_(t.c.state == "create", and_(t.c.state == "failed", or_(*retries)))


def _stale(t: Table, before: datetime) -> ColumnElement[bool]:
    return and_(t.c.state != "published", t.c.updated_at < before)
