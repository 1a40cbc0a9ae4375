"""Plain SQL on the asyncpg connection under a unit of work's SQLAlchemy connection, in its
transaction (docs/architecture.md): the batch statements of delivery and relay.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection


class PgStatements:
    def __init__(self, connection: AsyncConnection) -> None:
        self._connection = connection
        self._driver: Any = None  # the asyncpg connection, once the transaction has begun

    async def fetch(self, sql: str, *args: object) -> Sequence[Any]:
        """The rows of `sql`; each indexed by position."""
        if self._driver is None:
            rows = (await self._connection.exec_driver_sql(sql, args)).all()
            self._driver = (await self._connection.get_raw_connection()).driver_connection
            return rows
        return await self._driver.fetch(sql, *args)  # type: ignore[no-any-return]

    async def execute(self, sql: str, *args: object) -> None:
        if self._driver is None:
            await self._connection.exec_driver_sql(sql, args)
            self._driver = (await self._connection.get_raw_connection()).driver_connection
        else:
            await self._driver.execute(sql, *args)
