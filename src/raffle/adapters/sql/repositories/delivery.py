"""Delivered effects on a shard: one row per delivered order."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Table, func, insert, select

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_ignore
from raffle.domain.delivery import Grant


class SqlDeliveryRepository:
    def __init__(self, connection: SqlConnection, table: Table, wins: Table) -> None:
        self._connection = connection
        self._table = table
        self._wins = wins  # the award records of the same shard table index

    async def add(self, grant: Grant, at: datetime) -> bool:
        statement = insert_ignore(self._connection.dialect, self._table, _row(grant, at))
        return (await self._connection.execute(statement)).rowcount == 1

    async def add_many(self, grants: Sequence[Grant], at: datetime) -> set[str]:
        t = self._table
        ids = [g.order_id for g in grants]
        query = select(t.c.order_id).where(t.c.order_id.in_(ids))
        there = set((await self._connection.execute(query)).scalars().all())
        new = {g.order_id: _row(g, at) for g in grants if g.order_id not in there}
        if new:
            await self._connection.execute(insert(t), list(new.values()))
        return set(new)

    async def count(self) -> int:
        query = select(func.count()).select_from(self._table)
        return int(await self._connection.scalar(query) or 0)

    async def tally(self, activity_id: int) -> dict[int, int]:
        d, w = self._table, self._wins
        query = (
            select(d.c.award_id, func.count())
            .select_from(d.join(w, w.c.order_id == d.c.order_id))
            .where(w.c.activity_id == activity_id)
            .group_by(d.c.award_id)
        )
        return {int(award): int(n) for award, n in await self._connection.execute(query)}


def _row(grant: Grant, at: datetime) -> dict[str, object]:
    return {
        "order_id": grant.order_id,
        "user_id": grant.user_id,
        "award_id": grant.award.id,
        "kind": grant.award.kind.value,
        "message_id": grant.message_id,
        "delivered_at": at,
    }
