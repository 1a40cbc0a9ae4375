"""A store's version row (one row, id 1): read by every process, moved on by every change."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import Select, Table, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.transaction import SqlTransaction


def version_of(table: Table) -> Select[Any]:
    return select(table.c.version).where(table.c.id == 1)


@asynccontextmanager
async def moved_on(engine: AsyncEngine, table: Table) -> AsyncIterator[tuple[SqlConnection, int]]:
    """One transaction that moves the version on first, and gives it: the row's lock makes
    changes take turns. Committed when the block ends, rolled back if it raises."""
    tx = SqlTransaction(engine)
    connection = await tx.open()
    try:
        await connection.execute(
            update(table).where(table.c.id == 1).values(version=table.c.version + 1)
        )
        version = int((await connection.execute(version_of(table))).scalar_one())
        yield connection, version
        await tx.commit()
    finally:
        await tx.close()
