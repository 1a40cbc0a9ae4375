"""Top-up orders on a user's shard: chances credited from a SKU, once per out-business-no."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_ignore_any, insert_into
from raffle.adapters.sql.tables.shard import ShardTables
from raffle.domain.quota import QuotaPack, TopUpOrder


class SqlTopUpRepository:
    def __init__(self, connection: SqlConnection, tables: ShardTables) -> None:
        self._connection = connection
        self._table = tables.top_up_order

    async def add(
        self,
        *,
        order_id: str,
        user_id: str,
        activity_id: int,
        sku: int,
        out_business_no: str,
        pack: QuotaPack,
        at: datetime,
    ) -> bool:
        order = TopUpOrder(order_id, user_id, activity_id, sku, out_business_no, pack, at)
        row = _top_up_row(order)
        # Any unique key: (user_id, out_business_no) is the one a repeat hits.
        statement = insert_ignore_any(self._connection.dialect, self._table, row)
        return (await self._connection.execute(statement)).rowcount == 1

    async def add_many(self, orders: Sequence[TopUpOrder]) -> set[str]:
        t = self._table
        # Both columns of the unique index, each as a list: the index finds them, and any
        # other user's same number found on the way is told apart below.
        query = select(t.c.user_id, t.c.out_business_no).where(
            t.c.user_id.in_({o.user_id for o in orders}),
            t.c.out_business_no.in_({o.out_business_no for o in orders}),
        )
        used = {(u, n) for u, n in await self._connection.execute(query)}
        rows: list[dict[str, Any]] = []
        for o in orders:
            if (o.user_id, o.out_business_no) not in used:
                used.add((o.user_id, o.out_business_no))
                rows.append(_top_up_row(o))
        if rows:
            await self._connection.execute(insert_into(t), rows)
        return {row["order_id"] for row in rows}

    async def exists(self, user_id: str, out_business_no: str) -> bool:
        t = self._table
        query = select(t.c.order_id).where(
            t.c.user_id == user_id, t.c.out_business_no == out_business_no
        )
        return (await self._connection.execute(query)).first() is not None


def _top_up_row(order: TopUpOrder) -> dict[str, Any]:
    return {
        "order_id": order.order_id,
        "user_id": order.user_id,
        "activity_id": order.activity_id,
        "sku": order.sku,
        "out_business_no": order.out_business_no,
        "total": order.pack.total,
        "day": order.pack.day,
        "month": order.pack.month,
        "created_at": order.at,
    }
