"""Server seeds and client seeds in SQL: seeds added if missing, periods ended by CAS."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select, update

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_ignore, upsert
from raffle.adapters.sql.tables.fairness import client_seed, draw_seed
from raffle.domain.fairness import ServerSeed


class SqlSeedRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def add(self, seed: ServerSeed) -> bool:
        row = {
            "activity_id": seed.activity_id,
            "period": seed.period,
            "seed": seed.secret.hex(),
            "commitment": seed.commitment,
            "starts_at": seed.starts_at,
            "ends_at": seed.ends_at,
        }
        statement = insert_ignore(self._connection.dialect, draw_seed, row)
        return bool((await self._connection.execute(statement)).rowcount)

    async def upcoming(self, activity_id: int, now: datetime) -> Sequence[ServerSeed]:
        c = draw_seed.c
        query = (
            select(draw_seed)
            .where(c.activity_id == activity_id, c.ends_at > now)
            .order_by(c.period)
        )
        return [_seed(r) for r in await self._connection.execute(query)]

    async def last(self, activity_id: int) -> ServerSeed | None:
        c = draw_seed.c
        query = (
            select(draw_seed).where(c.activity_id == activity_id).order_by(c.period.desc()).limit(1)
        )
        row = (await self._connection.execute(query)).first()
        return None if row is None else _seed(row)

    async def get(self, activity_id: int, period: int) -> ServerSeed | None:
        c = draw_seed.c
        query = select(draw_seed).where(c.activity_id == activity_id, c.period == period)
        row = (await self._connection.execute(query)).first()
        return None if row is None else _seed(row)

    async def by_commitment(self, commitment: str) -> ServerSeed | None:
        query = select(draw_seed).where(draw_seed.c.commitment == commitment)
        row = (await self._connection.execute(query)).first()
        return None if row is None else _seed(row)

    async def revealed(self, activity_id: int, now: datetime, limit: int) -> Sequence[ServerSeed]:
        c = draw_seed.c
        query = (
            select(draw_seed)
            .where(c.activity_id == activity_id, c.ends_at <= now)
            .order_by(c.period.desc())
            .limit(limit)
        )
        return [_seed(r) for r in await self._connection.execute(query)]

    async def end(
        self, activity_id: int, period: int, at: datetime, next_ends_at: datetime
    ) -> bool:
        c = draw_seed.c
        ended = await self._connection.execute(
            update(draw_seed)
            .where(c.activity_id == activity_id, c.period == period, c.ends_at > at)
            .values(ends_at=at)
        )
        if ended.rowcount != 1:
            return False
        await self._connection.execute(
            update(draw_seed)
            .where(c.activity_id == activity_id, c.period == period + 1)
            .values(starts_at=at, ends_at=next_ends_at)
        )
        return True

    async def client_seeds(self, since: datetime | None) -> Sequence[tuple[str, str, datetime]]:
        c = client_seed.c
        query = select(c.user_id, c.seed, c.updated_at)
        if since is not None:
            query = query.where(c.updated_at > since)
        return [(r.user_id, r.seed, r.updated_at) for r in await self._connection.execute(query)]

    async def set_client_seed(self, user_id: str, seed: str, at: datetime) -> None:
        row = {"user_id": user_id, "seed": seed, "updated_at": at}
        await self._connection.execute(upsert(self._connection.dialect, client_seed, row))


def _seed(row: Any) -> ServerSeed:
    m = row._mapping
    return ServerSeed(
        m["activity_id"], m["period"], bytes.fromhex(m["seed"]), m["starts_at"], m["ends_at"]
    )
