"""Scheduled draws in SQL: the draw's row set once per step by compare-and-set, entrants and
winners a row each."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import false, select, update

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_ignore
from raffle.adapters.sql.tables.scheduled import (
    scheduled_draw,
    scheduled_entrant,
    scheduled_winner,
)
from raffle.domain.scheduled import Pick, ScheduledDraw


class SqlScheduledDraws:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def add(self, draw: ScheduledDraw) -> bool:
        row = {
            "activity_id": draw.activity_id,
            "seed": draw.secret.hex(),
            "commitment": draw.commitment,
        }
        statement = insert_ignore(self._connection.dialect, scheduled_draw, row)
        return bool((await self._connection.execute(statement)).rowcount)

    async def get(self, activity_id: int) -> ScheduledDraw | None:
        query = select(scheduled_draw).where(scheduled_draw.c.activity_id == activity_id)
        row = (await self._connection.execute(query)).first()
        return None if row is None else _draw(row)

    async def held_open(self, activity_id: int) -> ScheduledDraw | None:
        query = (
            select(scheduled_draw)
            .where(scheduled_draw.c.activity_id == activity_id)
            .with_for_update(read=True)  # SQLite: its one writer at a time holds it anyway
        )
        row = (await self._connection.execute(query)).first()
        return None if row is None else _draw(row)

    async def close(self, activity_id: int, at: datetime) -> bool:
        c = scheduled_draw.c
        closed = await self._connection.execute(
            update(scheduled_draw)
            .where(c.activity_id == activity_id, c.frozen_at.is_(None))
            .values(frozen_at=at)
        )
        return closed.rowcount == 1

    async def enter(self, activity_id: int, user_id: str, at: datetime) -> datetime:
        row = {"activity_id": activity_id, "user_id": user_id, "entered_at": at}
        await self._connection.execute(
            insert_ignore(self._connection.dialect, scheduled_entrant, row)
        )
        entered = await self.entered(activity_id, user_id)
        assert entered is not None  # added, or there before
        return entered

    async def entered(self, activity_id: int, user_id: str) -> datetime | None:
        c = scheduled_entrant.c
        query = select(c.entered_at).where(c.activity_id == activity_id, c.user_id == user_id)
        found: datetime | None = (await self._connection.execute(query)).scalar()
        return found

    async def entrants(self, activity_id: int, after: str | None, limit: int) -> list[str]:
        c = scheduled_entrant.c
        query = select(c.user_id).where(c.activity_id == activity_id)
        if after is not None:
            query = query.where(c.user_id > after)
        query = query.order_by(c.user_id).limit(limit)
        return [r.user_id for r in await self._connection.execute(query)]

    async def entrant_at(self, activity_id: int, after: str | None, offset: int) -> str | None:
        c = scheduled_entrant.c
        query = select(c.user_id).where(c.activity_id == activity_id)
        if after is not None:
            query = query.where(c.user_id > after)
        query = query.order_by(c.user_id).limit(1).offset(offset)
        found: str | None = (await self._connection.execute(query)).scalar()
        return found

    async def freeze(self, activity_id: int, entrants: int, digest: str) -> bool:
        c = scheduled_draw.c
        frozen = await self._connection.execute(
            update(scheduled_draw)
            .where(c.activity_id == activity_id, c.frozen_at.isnot(None), c.entrants_hash.is_(None))
            .values(entrants=entrants, entrants_hash=digest)
        )
        return frozen.rowcount == 1

    async def drawn(
        self,
        activity_id: int,
        picks: Sequence[tuple[Pick, str]],
        skipped: Sequence[str],
        at: datetime,
    ) -> bool:
        c = scheduled_draw.c
        done = await self._connection.execute(
            update(scheduled_draw)
            .where(c.activity_id == activity_id, c.drawn_at.is_(None), c.entrants_hash.isnot(None))
            .values(drawn_at=at, skipped=json.dumps(list(skipped)))
        )
        if done.rowcount != 1:
            return False
        if picks:
            rows = [
                {"activity_id": activity_id, "award_id": p.award_id, "rank_no": p.rank,
                 "position": p.position, "user_id": p.user_id, "order_id": order_id}
                for p, order_id in picks
            ]  # fmt: skip
            await self._connection.execute(scheduled_winner.insert(), rows)
        return True

    async def winners(self, activity_id: int) -> list[tuple[Pick, str, bool]]:
        c = scheduled_winner.c
        query = select(scheduled_winner).where(c.activity_id == activity_id)
        rows = await self._connection.execute(query)
        found = [(_pick(r), r.order_id, bool(r.recorded)) for r in rows]
        return sorted(found, key=lambda w: w[1])  # order ids go up in the order picked

    async def won(self, activity_id: int, user_id: str) -> list[tuple[Pick, str]]:
        c = scheduled_winner.c
        query = select(scheduled_winner).where(c.activity_id == activity_id, c.user_id == user_id)
        found = [(_pick(r), r.order_id) for r in await self._connection.execute(query)]
        return sorted(found, key=lambda w: w[1])

    async def recorded(self, activity_id: int, order_ids: Sequence[str]) -> None:
        c = scheduled_winner.c
        await self._connection.execute(
            update(scheduled_winner)
            .where(c.activity_id == activity_id, c.order_id.in_(list(order_ids)))
            .values(recorded=True)
        )

    async def unrecorded(self, activity_id: int, limit: int) -> list[tuple[Pick, str]]:
        c = scheduled_winner.c
        query = (
            select(scheduled_winner)
            .where(c.activity_id == activity_id, c.recorded == false())
            .order_by(c.order_id)
            .limit(limit)
        )
        return [(_pick(r), r.order_id) for r in await self._connection.execute(query)]


def _pick(row: Any) -> Pick:
    return Pick(row.award_id, row.rank_no, row.position, row.user_id)


def _draw(row: Any) -> ScheduledDraw:
    skipped = () if row.skipped is None else tuple(json.loads(row.skipped))
    return ScheduledDraw(
        row.activity_id, bytes.fromhex(row.seed), row.entrants, row.entrants_hash,
        row.frozen_at, row.drawn_at, skipped,
    )  # fmt: skip
