"""Claims of won prizes in SQL: each raffle order claimed or expired once, on its shard."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import Table, exists, select

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_ignore, insert_ignore_many
from raffle.domain.prize_claims import ClaimState

CHUNK = 500  # orders marked expired per statement


class SqlPrizeClaimRepository:
    def __init__(self, connection: SqlConnection, table: Table, award_record: Table) -> None:
        self._connection = connection
        self._table = table
        self._wins = award_record

    async def states(self, order_ids: Collection[str]) -> dict[str, ClaimState]:
        if not order_ids:
            return {}
        t = self._table
        rows = await self._connection.execute(
            select(t.c.order_id, t.c.state).where(t.c.order_id.in_(list(order_ids)))
        )
        return {order_id: ClaimState(state) for order_id, state in rows}

    async def record(self, order_id: str, user_id: str, state: ClaimState, at: datetime) -> bool:
        row = {"order_id": order_id, "user_id": user_id, "state": state.value, "at": at}
        statement = insert_ignore(self._connection.dialect, self._table, row)
        return (await self._connection.execute(statement)).rowcount == 1

    async def expire(
        self,
        activity_id: int,
        strategy_id: int,
        award_id: int,
        won_after: datetime | None,
        won_before: datetime,
        at: datetime,
    ) -> int:
        w, t = self._wins, self._table
        query = (
            select(w.c.order_id, w.c.user_id)
            .where(
                w.c.strategy_id == strategy_id,
                w.c.award_id == award_id,
                w.c.activity_id == activity_id,
                w.c.created_at < won_before,
                ~exists().where(t.c.order_id == w.c.order_id),
            )
            .order_by(w.c.order_id)
            .limit(CHUNK)
        )
        if won_after is not None:
            query = query.where(w.c.created_at >= won_after)
        found = (await self._connection.execute(query)).all()
        if not found:
            return 0
        rows = [
            {"order_id": o, "user_id": u, "state": ClaimState.EXPIRED.value, "at": at}
            for o, u in found
        ]
        # Each row skipped if a claim (or another run of the job) wrote it since the read.
        statement = insert_ignore_many(self._connection.dialect, t).values(rows)
        return int((await self._connection.execute(statement)).rowcount)
