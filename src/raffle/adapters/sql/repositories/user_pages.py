"""Every user a tag's preview counts, a page at a time: each account and each stored profile
(of a player who has not signed up yet), with the stored profile or an empty one."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select, union
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.repositories.profiles import SqlProfileRepository
from raffle.adapters.sql.tables.config import user_account
from raffle.adapters.sql.tables.profiles import profile
from raffle.domain.profiles import Profile


class SqlUserPages:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def page(self, after: str | None, limit: int) -> Sequence[Profile]:
        users = union(select(user_account.c.user_id), select(profile.c.user_id)).subquery()
        query = select(users.c.user_id).order_by(users.c.user_id).limit(limit)
        if after is not None:
            query = query.where(users.c.user_id > after)
        async with self._engine.connect() as connection:
            ids = [str(u) for u in (await connection.execute(query)).scalars()]
            stored = await SqlProfileRepository(connection).many(ids)
        return [stored.get(user_id) or Profile(user_id) for user_id in ids]
