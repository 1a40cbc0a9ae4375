"""Flash sales in SQL: a sale's `sold` moved only by a conditional update, beside its orders."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_ignore
from raffle.adapters.sql.tables.flash_sales import flash_order, flash_sale
from raffle.adapters.sql.transaction import transaction
from raffle.domain.flash_sales import LIVE, Currency, OrderState, Purchase, Sale, SaleOrder
from raffle.service.ports.flash_sales import Holding

_LIVE = tuple(state.value for state in LIVE)


class SqlFlashSaleRepository:
    """The sales themselves, in a unit of work's transaction (campaign loads and exports)."""

    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def add(self, sale: Sale) -> bool:
        row = {**_sale_row(sale), "sold": 0}
        statement = insert_ignore(self._connection.dialect, flash_sale, row)
        return (await self._connection.execute(statement)).rowcount == 1

    async def get(self, sale_id: int) -> Sale | None:
        query = select(flash_sale).where(flash_sale.c.id == sale_id)
        row = (await self._connection.execute(query)).first()
        return None if row is None else _sale(row)

    async def all(self) -> list[Sale]:
        rows = await self._connection.execute(select(flash_sale).order_by(flash_sale.c.id))
        return [_sale(row) for row in rows]


class SqlFlashSales:
    """The sales and their orders, each call its own transaction."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def add(self, sale: Sale) -> bool:
        async with transaction(self._engine) as connection:
            return await SqlFlashSaleRepository(connection).add(sale)

    async def get(self, sale_id: int) -> Sale | None:
        async with transaction(self._engine) as connection:
            return await SqlFlashSaleRepository(connection).get(sale_id)

    async def all(self) -> list[Sale]:
        async with transaction(self._engine) as connection:
            return await SqlFlashSaleRepository(connection).all()

    async def order(self, purchase: Purchase, sale: Sale, expires_at: datetime | None) -> str:
        try:
            return await self._order(purchase, sale, expires_at)
        except _Repeated:
            return await self._order(purchase, sale, expires_at)  # finds the row now

    async def _order(self, purchase: Purchase, sale: Sale, expires_at: datetime | None) -> str:
        async with transaction(self._engine) as connection:
            if (found := await _state(connection, purchase)) is not None:
                return "" if found == OrderState.REFUSED.value else purchase.order_id
            state = await _take(connection, purchase, sale)
            expires = expires_at if state is OrderState.AWAITING_PAYMENT else None
            row = _order_row(purchase, sale, state, expires)
            added = await connection.execute(insert_ignore(connection.dialect, flash_order, row))
            if added.rowcount != 1:  # stored meanwhile by a concurrent redelivery
                raise _Repeated(purchase.order_id)
        return "" if state is OrderState.REFUSED else purchase.order_id

    async def refuse(self, purchase: Purchase, sale: Sale) -> bool:
        row = _order_row(purchase, sale, OrderState.REFUSED, None)
        async with transaction(self._engine) as connection:
            added = await connection.execute(insert_ignore(connection.dialect, flash_order, row))
            return added.rowcount == 1

    async def of_user(self, sale_id: int, user_id: str) -> list[SaleOrder]:
        o = flash_order.c
        query = (
            select(flash_order).where(o.sale_id == sale_id, o.user_id == user_id).order_by(o.seq)
        )
        async with transaction(self._engine) as connection:
            return [_order(row) for row in await connection.execute(query)]

    async def holders(self, sale_id: int) -> tuple[int, dict[str, Holding]]:
        o = flash_order.c
        live = func.sum(case((o.state.in_(_LIVE), 1), else_=0))
        query = (
            select(o.user_id, live, func.max(o.seq)).where(o.sale_id == sale_id).group_by(o.user_id)
        )
        async with transaction(self._engine) as connection:
            rows = list(await connection.execute(query))
        holders = {user: Holding(int(held or 0), int(seq)) for user, held, seq in rows}
        return sum(h.held for h in holders.values()), holders

    async def overdue(self, now: datetime, limit: int) -> Sequence[SaleOrder]:
        o = flash_order.c
        query = (
            select(flash_order)
            .where(o.state == OrderState.AWAITING_PAYMENT.value, o.expires_at <= now)
            .order_by(o.expires_at)
            .limit(limit)
        )
        async with transaction(self._engine) as connection:
            return [_order(row) for row in await connection.execute(query)]

    async def expire(self, order: SaleOrder, now: datetime) -> bool:
        o, s = flash_order.c, flash_sale.c
        async with transaction(self._engine) as connection:
            await _lock(connection, order.sale_id)  # first, as an order's transaction does
            moved = await connection.execute(
                update(flash_order)
                .where(
                    o.sale_id == order.sale_id,
                    o.user_id == order.user_id,
                    o.seq == order.seq,
                    o.state == OrderState.AWAITING_PAYMENT.value,
                )
                .values(state=OrderState.EXPIRED.value, updated_at=now)
            )
            if moved.rowcount != 1:
                return False
            await connection.execute(
                update(flash_sale).where(s.id == order.sale_id).values(sold=s.sold - 1)
            )
        return True

    async def pay(self, order: SaleOrder, now: datetime) -> OrderState | None:
        o = flash_order.c
        mine = (o.sale_id == order.sale_id, o.user_id == order.user_id, o.seq == order.seq)
        async with transaction(self._engine) as connection:
            await connection.execute(
                update(flash_order)
                .where(*mine, o.state == OrderState.AWAITING_PAYMENT.value)
                .values(state=OrderState.DONE.value, updated_at=now)
            )
            found = (await connection.execute(select(o.state).where(*mine))).first()
        return None if found is None else OrderState(found[0])

    async def counts(self, sale_id: int) -> dict[str, int]:
        o = flash_order.c
        query = select(o.state, func.count()).where(o.sale_id == sale_id).group_by(o.state)
        async with transaction(self._engine) as connection:
            return {state: int(n) for state, n in await connection.execute(query)}


class _Repeated(Exception):
    """Rolls the transaction back (its unit with it); the caller's retry finds the row."""


async def _take(connection: SqlConnection, purchase: Purchase, sale: Sale) -> OrderState:
    """A unit of the sale for the purchase, or REFUSED: none left, or its user holds
    `per_user` live orders already (why the database counts them too: FlashSales.handle).
    The sale's row is locked before they are counted, so two purchases of one user
    delivered at once are counted one after the other."""
    await _lock(connection, sale.id)
    if await _held(connection, purchase) >= sale.per_user:
        return OrderState.REFUSED
    s = flash_sale.c
    taken = await connection.execute(
        update(flash_sale).where(s.id == sale.id, s.sold < s.stock).values(sold=s.sold + 1)
    )
    if taken.rowcount != 1:
        return OrderState.REFUSED
    return OrderState.AWAITING_PAYMENT if sale.paid_later else OrderState.DONE


async def _lock(connection: SqlConnection, sale_id: int) -> None:
    """The sale's row, locked until the transaction ends. Every transaction that changes a
    sale's orders and its `sold` together takes it first, before any order row: one order
    of locks, so none waits for another in a circle. (SQLite renders no FOR UPDATE: its
    transactions take turns whole.)"""
    s = flash_sale.c
    await connection.execute(select(s.id).where(s.id == sale_id).with_for_update())


async def _held(connection: SqlConnection, purchase: Purchase) -> int:
    """The user's live orders in the sale, by a locking read: it reads the rows as last
    committed, not the transaction's snapshot, whatever the isolation level (MariaDB's
    plain reads under REPEATABLE READ would see the snapshot of the transaction's first
    read, taken before the sale's lock was granted). Rows, not a count: PostgreSQL locks
    no aggregate."""
    o = flash_order.c
    query = (
        select(o.seq)
        .where(o.sale_id == purchase.sale_id, o.user_id == purchase.user_id, o.state.in_(_LIVE))
        .with_for_update(read=True)
    )
    return len((await connection.execute(query)).all())


async def _state(connection: SqlConnection, purchase: Purchase) -> str | None:
    o = flash_order.c
    query = select(o.state).where(
        o.sale_id == purchase.sale_id, o.user_id == purchase.user_id, o.seq == purchase.seq
    )
    found = (await connection.execute(query)).first()
    return None if found is None else str(found[0])


def _order_row(
    purchase: Purchase, sale: Sale, state: OrderState, expires_at: datetime | None
) -> dict[str, Any]:
    return {
        "sale_id": sale.id,
        "user_id": purchase.user_id,
        "seq": purchase.seq,
        "order_id": purchase.order_id,
        "price": sale.price,
        "currency": sale.currency.value,
        "state": state.value,
        "created_at": purchase.at,
        "expires_at": expires_at,
        "updated_at": purchase.at,
    }


def _sale_row(sale: Sale) -> dict[str, Any]:
    return {
        "id": sale.id,
        "name": sale.name,
        "description": sale.description,
        "image": sale.image,
        "price": sale.price,
        "currency": sale.currency.value,
        "original_price": sale.original_price,
        "stock": sale.stock,
        "per_user": sale.per_user,
        "starts_at": sale.starts_at,
        "ends_at": sale.ends_at,
        "time_zone": sale.time_zone,
        "sku": sale.sku,
        "award_id": sale.award_id,
    }


def _sale(row: Any) -> Sale:
    return Sale(
        id=row.id,
        name=row.name,
        price=row.price,
        currency=Currency(row.currency),
        stock=row.stock,
        starts_at=row.starts_at,
        ends_at=row.ends_at,
        time_zone=row.time_zone,
        original_price=row.original_price,
        description=row.description,
        image=row.image,
        per_user=row.per_user,
        sku=row.sku,
        award_id=row.award_id,
    )


def _order(row: Any) -> SaleOrder:
    return SaleOrder(
        order_id=row.order_id,
        sale_id=row.sale_id,
        user_id=row.user_id,
        seq=row.seq,
        price=row.price,
        currency=Currency(row.currency),
        state=OrderState(row.state),
        created_at=row.created_at,
        expires_at=row.expires_at,
    )
