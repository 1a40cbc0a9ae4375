"""Every account as a profile with nothing known but its id, a page at a time: what a tag's
preview scans while no profile is stored (a user without one has an empty profile)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.tables.config import user_account
from raffle.domain.profiles import Profile


class SqlUserPages:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def page(self, after: str | None, limit: int) -> Sequence[Profile]:
        query = select(user_account.c.user_id).order_by(user_account.c.user_id).limit(limit)
        if after is not None:
            query = query.where(user_account.c.user_id > after)
        async with self._engine.connect() as connection:
            return [Profile(str(u)) for u in (await connection.execute(query)).scalars()]
