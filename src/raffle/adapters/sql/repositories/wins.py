"""A user's wins (award records) on their shard, and their delivery state."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from sqlalchemy import Table, func, select, update

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_into
from raffle.adapters.sql.tables.shard import ERROR_MESSAGE_LENGTH, ShardTables
from raffle.domain.draws import DeliveryError, Win, WinState


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
        return None if row is None else win_from_row(row._mapping, w)

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

    async def entrants(self, activity_id: int) -> int:
        w = self._table
        query = select(func.count(w.c.user_id.distinct())).where(w.c.activity_id == activity_id)
        return int(await self._connection.scalar(query) or 0)

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
        return [win_from_row(row._mapping, w) for row in await self._connection.execute(query)]

    async def feed(
        self,
        activity_id: int,
        award_ids: Collection[int],
        bound: str | None,
        *,
        newer: bool,
        inclusive: bool,
        limit: int,
    ) -> list[Win]:
        w = self._table
        query = select(w).where(w.c.activity_id == activity_id, w.c.award_id.in_(award_ids))
        if bound is not None:
            if newer:
                query = query.where(w.c.order_id >= bound if inclusive else w.c.order_id > bound)
            else:
                query = query.where(w.c.order_id <= bound if inclusive else w.c.order_id < bound)
        order = w.c.order_id.asc() if newer else w.c.order_id.desc()
        rows = await self._connection.execute(query.order_by(order).limit(limit))
        return [win_from_row(row._mapping, w) for row in rows]

    async def states(self) -> dict[WinState, int]:
        w = self._table
        query = select(w.c.state, func.count()).group_by(w.c.state)
        return {WinState(s): n for s, n in await self._connection.execute(query)}


def _forgotten(new: WinState) -> dict[str, None]:
    """A completed delivery has no failure to tell: the last error is cleared with it."""
    return {"error_code": None, "error_message": None} if new is WinState.COMPLETED else {}


def win_from_row(row: Mapping[Any, Any], w: Table) -> Win:
    """The win of a row read by column object (an order joined with its win shares names)."""
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
