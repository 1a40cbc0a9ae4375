"""A user's raffle orders on their shard: one per chance consumed, and the history of
their draws (each order with its win)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Table, select

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories import draw_series
from raffle.adapters.sql.repositories.upsert import insert_into
from raffle.adapters.sql.repositories.wins import win_from_row
from raffle.adapters.sql.tables.shard import ShardTables
from raffle.domain.draws import OrderState, RaffleOrder, Win


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
            "policy_id": order.policy_id,
            "proof": order.proof,
        }
        await self._connection.execute(insert_into(self._orders), row)

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
        return [(_order(row._mapping, o), win_from_row(row._mapping, w)) for row in rows]

    async def get(self, user_id: str, order_id: str) -> tuple[RaffleOrder, Win] | None:
        o, w = self._orders, self._wins
        query = (
            select(o, w)
            .join(w, w.c.order_id == o.c.order_id)
            .where(o.c.user_id == user_id, o.c.order_id == order_id)
        )
        row = (await self._connection.execute(query)).first()
        if row is None:
            return None
        return _order(row._mapping, o), win_from_row(row._mapping, w)


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
        policy_id=row[o.c.policy_id],
        proof=row[o.c.proof],
    )
