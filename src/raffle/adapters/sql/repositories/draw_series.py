"""Draws counted per minute on one shard table, for the operators' live chart."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, Table, func, select, text
from sqlalchemy.engine import Dialect

from raffle.adapters.sql.connection import SqlConnection


def _minute(dialect: Dialect, column: Any) -> ColumnElement[str]:
    """The minute of a naive-UTC timestamp as 'YYYY-MM-DD HH:MM' text: each database has its
    own function, and grouping in SQL keeps a busy minute to one row instead of thousands."""
    if dialect.name == "postgresql":
        return func.to_char(column, "YYYY-MM-DD HH24:MI")
    if dialect.name in ("mysql", "mariadb"):
        return func.date_format(column, "%Y-%m-%d %H:%i")
    # SQLite keeps 'YYYY-MM-DD HH:MM:SS.ffffff' text (the direct driver writes the same).
    return func.substr(column, 1, 16)


async def per_minute(
    connection: SqlConnection, orders: Table, activity_id: int, since: datetime
) -> dict[datetime, int]:
    minute = _minute(connection.dialect, orders.c.created_at).label("minute")
    query = (
        select(minute, func.count())
        .where(orders.c.activity_id == activity_id, orders.c.created_at >= since)
        # By position: the expression's format is a bind parameter, and a second copy of it
        # in GROUP BY would be another parameter PostgreSQL cannot tell is the same.
        .group_by(text("1"))
    )
    rows = await connection.execute(query)
    return {_read(str(label)): int(n) for label, n in rows}


def _read(label: str) -> datetime:
    return datetime.strptime(label.replace("T", " "), "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
