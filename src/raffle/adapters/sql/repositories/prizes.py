"""Prize effects in SQL: coupon codes handed out of a pool, access grants, shipments."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import (
    insert_ignore,
    insert_ignore_any,
    insert_ignore_many,
)
from raffle.adapters.sql.tables.prizes import PrizeTables, code_pool
from raffle.adapters.sql.transaction import transaction
from raffle.domain.fulfilment import AccessGrant, Address, PoolStats, Shipment, ShipmentState

BATCH = 1000  # codes per INSERT when a pool is filled


class SqlCodePoolRepository:
    """Code pools on the configuration database."""

    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def hand_out(self, pool: str, order_id: str, user_id: str, at: datetime) -> str | None:
        c = code_pool.c
        if (code := await self._handed(order_id)) is not None:
            return code  # a redelivery: the order keeps the code it got
        while True:
            # SKIP LOCKED: concurrent claims each take a different free row instead of all
            # queueing on the first one (SQLite has one writer at a time and needs nothing).
            free = await self._connection.scalar(
                select(c.code)
                .where(c.pool == pool, c.order_id.is_(None))
                .order_by(c.code)
                .limit(1)
                .with_for_update(skip_locked=True)
            )
            if free is None:
                # Also when the last free codes are held by claims in flight that then roll
                # back: the delivery fails, and its retry finds them.
                return None
            # The same order claimed at once elsewhere breaks the unique order id once the
            # other commits: undo just this claim and hand out the other's code.
            savepoint = await self._connection.begin_nested()
            try:
                claimed = await self._connection.execute(
                    update(code_pool)
                    .where(c.pool == pool, c.code == free, c.order_id.is_(None))
                    .values(order_id=order_id, user_id=user_id, handed_at=at)
                )
            except IntegrityError:
                await savepoint.rollback()
                return await self._handed(order_id)
            await savepoint.commit()
            if claimed.rowcount == 1:
                return str(free)

    async def add(self, pool: str, codes: Sequence[str]) -> int:
        before = await self._count(pool)
        statement = insert_ignore_many(self._connection.dialect, code_pool)
        for start in range(0, len(codes), BATCH):
            rows = [{"pool": pool, "code": code} for code in codes[start : start + BATCH]]
            await self._connection.execute(statement, rows)
        return await self._count(pool) - before

    async def stats(self, pools: Collection[str] | None = None) -> list[PoolStats]:
        c = code_pool.c
        query = (
            select(c.pool, func.count(), func.count(c.order_id)).group_by(c.pool).order_by(c.pool)
        )
        if pools is not None:
            query = query.where(c.pool.in_(list(pools)))
        rows = await self._connection.execute(query)
        return [PoolStats(name, int(total), int(handed)) for name, total, handed in rows]

    async def for_orders(self, order_ids: Collection[str]) -> dict[str, str]:
        if not order_ids:
            return {}
        c = code_pool.c
        rows = await self._connection.execute(
            select(c.order_id, c.code).where(c.order_id.in_(list(order_ids)))
        )
        return {str(order_id): str(code) for order_id, code in rows}

    async def free_codes(self) -> dict[str, list[str]]:
        c = code_pool.c
        free: dict[str, list[str]] = {s.name: [] for s in await self.stats()}
        rows = await self._connection.execute(
            select(c.pool, c.code).where(c.order_id.is_(None)).order_by(c.pool, c.code)
        )
        for pool, code in rows:
            free[str(pool)].append(str(code))
        return free

    async def _handed(self, order_id: str) -> str | None:
        c = code_pool.c
        code = await self._connection.scalar(select(c.code).where(c.order_id == order_id))
        return None if code is None else str(code)

    async def _count(self, pool: str) -> int:
        c = code_pool.c
        query = select(func.count()).select_from(code_pool).where(c.pool == pool)
        return int(await self._connection.scalar(query) or 0)


class CommittedCouponCodes:
    """Codes claimed from a shard on another database than the pools: each claim is a
    transaction of its own on the configuration database, committed before the shard's.

    Exactly once all the same: the claim binds the code to the order id (unique), so a
    delivery that dies after it and runs again is handed the same code, and no other order
    can ever get it. What a crash can leave is a code bound to an order whose award record
    is not completed yet — the redelivery completes it.
    """

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def hand_out(self, pool: str, order_id: str, user_id: str, at: datetime) -> str | None:
        async with transaction(self._engine) as connection:
            return await SqlCodePoolRepository(connection).hand_out(pool, order_id, user_id, at)


class SqlAccessGrantRepository:
    def __init__(self, connection: SqlConnection, tables: PrizeTables) -> None:
        self._connection = connection
        self._table = tables.access_grant

    async def add(self, grant: AccessGrant) -> bool:
        row = {
            "user_id": grant.user_id,
            "content_id": grant.content_id,
            "order_id": grant.order_id,
            "granted_at": grant.granted_at,
        }
        # Either unique key makes it a no-op: (user, content) held, or this order granted.
        statement = insert_ignore_any(self._connection.dialect, self._table, row)
        return (await self._connection.execute(statement)).rowcount == 1

    async def of_user(self, user_id: str) -> list[AccessGrant]:
        t = self._table
        rows = await self._connection.execute(
            select(t).where(t.c.user_id == user_id).order_by(t.c.granted_at, t.c.content_id)
        )
        return [AccessGrant(r.user_id, r.content_id, r.order_id, r.granted_at) for r in rows]

    async def get(self, user_id: str, content_id: str) -> AccessGrant | None:
        t = self._table
        rows = await self._connection.execute(
            select(t).where(t.c.user_id == user_id, t.c.content_id == content_id)
        )
        r = rows.first()
        return None if r is None else AccessGrant(r.user_id, r.content_id, r.order_id, r.granted_at)


class SqlShipmentRepository:
    def __init__(self, connection: SqlConnection, tables: PrizeTables) -> None:
        self._connection = connection
        self._table = tables.shipment

    async def open(self, shipment: Shipment) -> bool:
        row = {
            "order_id": shipment.order_id,
            "user_id": shipment.user_id,
            "award_id": shipment.award_id,
            "state": shipment.state.value,
            **_address_row(shipment.address),
            "tracking": shipment.tracking,
            "created_at": shipment.created_at,
            "updated_at": shipment.updated_at,
        }
        statement = insert_ignore(self._connection.dialect, self._table, row)
        return (await self._connection.execute(statement)).rowcount == 1

    async def get(self, order_id: str) -> Shipment | None:
        found = await self.for_orders([order_id])
        return found.get(order_id)

    async def set_address(self, order_id: str, address: Address, at: datetime) -> bool:
        t = self._table
        result = await self._connection.execute(
            update(t)
            .where(t.c.order_id == order_id, t.c.state != ShipmentState.SHIPPED.value)
            .values(state=ShipmentState.READY.value, updated_at=at, **_address_row(address))
        )
        return result.rowcount == 1

    async def ship(self, order_id: str, tracking: str | None, at: datetime) -> bool:
        t = self._table
        result = await self._connection.execute(
            update(t)
            .where(t.c.order_id == order_id, t.c.state == ShipmentState.READY.value)
            .values(state=ShipmentState.SHIPPED.value, tracking=tracking, updated_at=at)
        )
        return result.rowcount == 1

    async def in_state(self, state: ShipmentState, after: str | None, limit: int) -> list[Shipment]:
        t = self._table
        query = select(t).where(t.c.state == state.value).order_by(t.c.order_id).limit(limit)
        if after is not None:
            query = query.where(t.c.order_id > after)
        return [_shipment(row._mapping) for row in await self._connection.execute(query)]

    async def for_orders(self, order_ids: Collection[str]) -> dict[str, Shipment]:
        if not order_ids:
            return {}
        t = self._table
        rows = await self._connection.execute(select(t).where(t.c.order_id.in_(list(order_ids))))
        return {row.order_id: _shipment(row._mapping) for row in rows}


def _address_row(address: Address | None) -> dict[str, str | None]:
    fields = ("name", "phone", "region", "line", "postcode")
    return {f: None if address is None else getattr(address, f) for f in fields}


def _shipment(row: Mapping[Any, Any]) -> Shipment:
    address = None
    if row["name"] is not None:
        address = Address(
            row["name"], row["phone"], row["region"], row["line"], row["postcode"] or ""
        )
    return Shipment(
        order_id=row["order_id"],
        user_id=row["user_id"],
        award_id=row["award_id"],
        state=ShipmentState(row["state"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        address=address,
        tracking=row["tracking"],
    )
