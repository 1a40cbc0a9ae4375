"""Session stores: rows of the `session` table (embedded default), or keys in Redis.

Both are keyed by the SHA-256 of the token, never the token itself, and slide the expiry to
`ttl_seconds` from now on every `touch`.
"""

from __future__ import annotations

import json
from datetime import timedelta

from redis.asyncio import Redis
from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.tables import session as session_table
from raffle.adapters.sql.transaction import transaction
from raffle.domain.users import Session
from raffle.service.ports import Clock


class SqlSessionStore:
    def __init__(self, engine: AsyncEngine, clock: Clock) -> None:
        self._engine = engine
        self._clock = clock

    async def create(self, session: Session, token_hash: str, ttl_seconds: int) -> None:
        expires_at = self._clock.now() + timedelta(seconds=ttl_seconds)
        async with transaction(self._engine) as connection:
            await connection.execute(
                insert(session_table).values(
                    token_hash=token_hash,
                    user_id=session.user_id,
                    is_admin=session.is_admin,
                    expires_at=expires_at,
                )
            )

    async def touch(self, token_hash: str, ttl_seconds: int) -> Session | None:
        now = self._clock.now()
        expires_at = now + timedelta(seconds=ttl_seconds)
        by_token = session_table.c.token_hash == token_hash
        async with transaction(self._engine) as connection:
            # UPDATE first, guarded by the expiry, so a session never outlives it by a race;
            # MariaDB counts matched rows, not changed ones (SQLAlchemy asks for FOUND_ROWS).
            slid = await connection.execute(
                update(session_table)
                .where(by_token, session_table.c.expires_at > now)
                .values(expires_at=expires_at)
            )
            if slid.rowcount == 0:
                await connection.execute(
                    delete(session_table).where(by_token, session_table.c.expires_at <= now)
                )
                return None
            row = (
                await connection.execute(
                    select(session_table.c.user_id, session_table.c.is_admin).where(by_token)
                )
            ).one()
        return Session(user_id=row.user_id, is_admin=row.is_admin, expires_at=expires_at)

    async def delete(self, token_hash: str) -> None:
        async with transaction(self._engine) as connection:
            await connection.execute(
                delete(session_table).where(session_table.c.token_hash == token_hash)
            )

    async def delete_expired(self) -> int:
        """Delete the sessions nobody touched before they expired; how many there were."""
        async with transaction(self._engine) as connection:
            result = await connection.execute(
                delete(session_table).where(session_table.c.expires_at <= self._clock.now())
            )
        return result.rowcount


class RedisSessionStore:
    """One key per session, holding the user and role, that Redis expires by itself."""

    def __init__(self, redis: Redis, clock: Clock, *, prefix: str = "raffle:session:") -> None:
        self._redis = redis
        self._clock = clock
        self._prefix = prefix

    async def create(self, session: Session, token_hash: str, ttl_seconds: int) -> None:
        value = json.dumps({"user_id": session.user_id, "is_admin": session.is_admin})
        await self._redis.set(self._prefix + token_hash, value, ex=ttl_seconds)

    async def touch(self, token_hash: str, ttl_seconds: int) -> Session | None:
        # GETEX reads and slides the expiry in one round trip.
        value = await self._redis.getex(self._prefix + token_hash, ex=ttl_seconds)
        if value is None:
            return None
        fields = json.loads(value)
        return Session(
            user_id=fields["user_id"],
            is_admin=fields["is_admin"],
            expires_at=self._clock.now() + timedelta(seconds=ttl_seconds),
        )

    async def delete(self, token_hash: str) -> None:
        await self._redis.delete(self._prefix + token_hash)

    async def delete_expired(self) -> int:
        return 0  # Redis expires the keys itself
