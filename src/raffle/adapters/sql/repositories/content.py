"""Paid content in SQL: a row each, its state changed only by compare-and-set."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import select, update

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_ignore
from raffle.adapters.sql.tables.content import content as table
from raffle.domain.content import Content, ContentState, ContentText


class SqlContentRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def add(self, content: Content) -> bool:
        row = {"id": content.id, "created_at": content.created_at, **_written(content)}
        statement = insert_ignore(self._connection.dialect, table, row)
        return (await self._connection.execute(statement)).rowcount == 1

    async def get(self, content_id: str) -> Content | None:
        return (await self.many([content_id])).get(content_id)

    async def replace(self, content: Content, was: ContentState) -> bool:
        c = table.c
        result = await self._connection.execute(
            update(table)
            .where(c.id == content.id, c.state == was.value)
            .values(**_written(content))
        )
        return result.rowcount == 1

    async def listing(
        self, states: Collection[ContentState] | None, after: str | None, limit: int
    ) -> list[Content]:
        c = table.c
        query = select(table).order_by(c.id).limit(limit)
        if states is not None:
            query = query.where(c.state.in_([s.value for s in states]))
        if after is not None:
            query = query.where(c.id > after)
        return [_content(row) for row in await self._connection.execute(query)]

    async def many(self, content_ids: Collection[str]) -> dict[str, Content]:
        if not content_ids:
            return {}
        rows = await self._connection.execute(select(table).where(table.c.id.in_(content_ids)))
        return {row.id: _content(row) for row in rows}


def _written(content: Content) -> dict[str, Any]:
    t = content.text
    return {
        "title": t.title,
        "summary": t.summary,
        "body": t.body,
        "preview": t.preview,
        "cover": t.cover,
        "price_cents": t.price_cents,
        "state": content.state.value,
        "updated_at": content.updated_at,
    }


def _content(row: Any) -> Content:
    text = ContentText(row.title, row.summary, row.body, row.preview, row.cover, row.price_cents)
    return Content(row.id, text, ContentState(row.state), row.created_at, row.updated_at)
