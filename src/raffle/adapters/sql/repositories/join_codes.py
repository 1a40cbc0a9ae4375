"""Join codes in SQL: added in bulk skipping existing ones, redeemed by a conditional UPDATE."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row, func, select, update
from sqlalchemy.exc import IntegrityError

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_ignore_many
from raffle.adapters.sql.tables.join_codes import join_code
from raffle.domain.join_codes import JoinCode, JoinCodeCounts
from raffle.service.ports.join_codes import Redemption

BATCH = 1000  # codes per INSERT


class SqlJoinCodeRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def add(self, codes: Sequence[JoinCode]) -> int:
        added = 0
        statement = insert_ignore_many(self._connection.dialect, join_code)
        for start in range(0, len(codes), BATCH):
            rows = [_row(code) for code in codes[start : start + BATCH]]
            # One statement of many rows: its row count is the rows inserted on every
            # database (an executemany's is not, on some drivers).
            added += (await self._connection.execute(statement.values(rows))).rowcount
        return added

    async def redeem(self, activity_id: int, code: str, user_id: str, at: datetime) -> Redemption:
        c = join_code.c
        # The user's other code breaks the unique (activity, user) index: undo just this
        # statement (a failed one aborts a PostgreSQL transaction).
        savepoint = await self._connection.begin_nested()
        try:
            bound = await self._connection.execute(
                update(join_code)
                .where(c.activity_id == activity_id, c.code == code, c.user_id.is_(None))
                .values(user_id=user_id, bound_at=at)
            )
        except IntegrityError:
            await savepoint.rollback()
            return Redemption.HELD
        await savepoint.commit()
        return Redemption.BOUND if bound.rowcount == 1 else Redemption.TAKEN

    async def get(self, activity_id: int, code: str) -> JoinCode | None:
        c = join_code.c
        rows = await self._connection.execute(
            select(join_code).where(c.activity_id == activity_id, c.code == code)
        )
        row = rows.first()
        return None if row is None else _code(row)

    async def held(self, activity_id: int, user_id: str) -> JoinCode | None:
        c = join_code.c
        rows = await self._connection.execute(
            select(join_code).where(c.activity_id == activity_id, c.user_id == user_id)
        )
        row = rows.first()
        return None if row is None else _code(row)

    async def counts(self, activity_id: int) -> JoinCodeCounts:
        c = join_code.c
        rows = await self._connection.execute(
            select(func.count(), func.count(c.user_id)).where(c.activity_id == activity_id)
        )
        total, used = rows.one()
        return JoinCodeCounts(activity_id, int(total), int(used))

    async def page(
        self, activity_id: int, *, after: str | None, limit: int, source: str | None = None
    ) -> list[JoinCode]:
        c = join_code.c
        query = select(join_code).where(c.activity_id == activity_id).order_by(c.code).limit(limit)
        if after is not None:
            query = query.where(c.code > after)
        if source is not None:
            query = query.where(c.source == source)
        return [_code(row) for row in await self._connection.execute(query)]


def _row(code: JoinCode) -> dict[str, Any]:
    return {
        "activity_id": code.activity_id,
        "code": code.code,
        "source": code.source,
        "remark": code.remark,
        "created_at": code.created_at,
        "user_id": code.user_id,
        "bound_at": code.bound_at,
    }


def _code(row: Row[Any]) -> JoinCode:
    return JoinCode(
        activity_id=row.activity_id,
        code=row.code,
        source=row.source,
        remark=row.remark,
        created_at=row.created_at,
        user_id=row.user_id,
        bound_at=row.bound_at,
    )
