"""Idempotency-Key records in SQL: one row per (user, key), the answer stored once known."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.repositories.upsert import insert_ignore
from raffle.adapters.sql.tables.config import idempotency
from raffle.adapters.sql.transaction import transaction
from raffle.service.idempotency import KeyInFlight, KeyReused
from raffle.service.ports import Clock

IN_FLIGHT_SECONDS = 60  # a reservation older than this belongs to a request that died


class SqlIdempotencyStore:
    def __init__(self, engine: AsyncEngine, clock: Clock) -> None:
        self._engine = engine
        self._clock = clock

    async def begin(self, user_id: str, key: str, request_hash: str) -> tuple[int, str] | None:
        now = self._clock.now()
        row = {
            "user_id": user_id,
            "request_key": key,
            "request_hash": request_hash,
            "status": None,
            "body": None,
            "created_at": now,
        }
        async with transaction(self._engine) as connection:
            inserted = await connection.execute(insert_ignore(connection.dialect, idempotency, row))
            if inserted.rowcount == 1:
                return None
            found = (
                await connection.execute(
                    select(idempotency).where(
                        idempotency.c.user_id == user_id, idempotency.c.request_key == key
                    )
                )
            ).one()
        if found.request_hash != request_hash:
            raise KeyReused("this Idempotency-Key was used for a different request")
        if found.status is None:
            if (now - found.created_at).total_seconds() < IN_FLIGHT_SECONDS:
                raise KeyInFlight("a request with this Idempotency-Key is still in progress")
            return await self._take_over(user_id, key, found.created_at, now)
        return int(found.status), str(found.body)

    async def finish(self, user_id: str, key: str, status: int, body: str) -> None:
        async with transaction(self._engine) as connection:
            await connection.execute(
                update(idempotency)
                .where(idempotency.c.user_id == user_id, idempotency.c.request_key == key)
                .values(status=status, body=body)
            )

    async def abandon(self, user_id: str, key: str) -> None:
        async with transaction(self._engine) as connection:
            await connection.execute(
                delete(idempotency).where(
                    idempotency.c.user_id == user_id,
                    idempotency.c.request_key == key,
                    idempotency.c.status.is_(None),
                )
            )

    async def delete_older(self, than: datetime) -> int:
        async with transaction(self._engine) as connection:
            result = await connection.execute(
                delete(idempotency).where(idempotency.c.created_at < than)
            )
        return result.rowcount

    async def _take_over(
        self, user_id: str, key: str, stale: datetime, now: datetime
    ) -> tuple[int, str] | None:
        # Compare-and-set on the old timestamp: of several retries, one takes over.
        async with transaction(self._engine) as connection:
            moved = await connection.execute(
                update(idempotency)
                .where(
                    idempotency.c.user_id == user_id,
                    idempotency.c.request_key == key,
                    idempotency.c.created_at == stale,
                    idempotency.c.status.is_(None),
                )
                .values(created_at=now)
            )
        if moved.rowcount != 1:
            raise KeyInFlight("a request with this Idempotency-Key is still in progress")
        return None
