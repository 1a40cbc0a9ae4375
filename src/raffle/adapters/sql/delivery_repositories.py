"""Delivered effects on a shard: one row per delivered order."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Table, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from raffle.adapters.sql.upsert import insert_ignore
from raffle.domain.delivery import Grant


class SqlDeliveryRepository:
    def __init__(self, connection: AsyncConnection, table: Table) -> None:
        self._connection = connection
        self._table = table

    async def add(self, grant: Grant, at: datetime) -> bool:
        row = {
            "order_id": grant.order_id,
            "user_id": grant.user_id,
            "award_id": grant.award.id,
            "kind": grant.award.kind.value,
            "message_id": grant.message_id,
            "delivered_at": at,
        }
        statement = insert_ignore(self._connection.dialect, self._table, row)
        return (await self._connection.execute(statement)).rowcount == 1

    async def count(self) -> int:
        query = select(func.count()).select_from(self._table)
        return int(await self._connection.scalar(query) or 0)
