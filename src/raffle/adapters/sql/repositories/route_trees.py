"""Decision trees in SQL: a row per saved version, the tree as its JSON document."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_ignore
from raffle.adapters.sql.tables.config import route_tree
from raffle.domain.route_tree_documents import from_document, to_document
from raffle.domain.route_trees import RouteTree, TreeVersion

_NEWEST = (
    select(route_tree.c.name, func.max(route_tree.c.version).label("version"))
    .group_by(route_tree.c.name)
    .subquery()
)


class SqlRouteTreeRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def get(self, name: str) -> TreeVersion | None:
        rows = await self._connection.execute(
            select(route_tree)
            .where(route_tree.c.name == name)
            .order_by(route_tree.c.version.desc())
            .limit(1)
        )
        row = rows.first()
        return None if row is None or row.document is None else _version(row)

    async def all(self) -> list[TreeVersion]:
        newest = route_tree.join(
            _NEWEST,
            (route_tree.c.name == _NEWEST.c.name) & (route_tree.c.version == _NEWEST.c.version),
        )
        rows = await self._connection.execute(
            select(route_tree)
            .select_from(newest)
            .where(route_tree.c.document.is_not(None))
            .order_by(route_tree.c.name)
        )
        return [_version(row) for row in rows]

    async def last_version(self, name: str) -> int:
        found = await self._connection.scalar(
            select(func.max(route_tree.c.version)).where(route_tree.c.name == name)
        )
        return 0 if found is None else int(found)

    async def add(
        self, name: str, version: int, tree: RouteTree | None, saved_by: str, saved_at: datetime
    ) -> bool:
        document = None if tree is None else json.dumps(to_document(tree), ensure_ascii=False)
        row = {
            "name": name,
            "version": version,
            "document": document,
            "saved_by": saved_by,
            "saved_at": saved_at,
        }
        # A save that lost the race waits on the winner's key, then inserts nothing.
        result = await self._connection.execute(
            insert_ignore(self._connection.dialect, route_tree, row)
        )
        return result.rowcount == 1


def _version(row: Any) -> TreeVersion:
    tree = from_document(json.loads(row.document))
    return TreeVersion(tree, int(row.version), row.saved_by, row.saved_at)
