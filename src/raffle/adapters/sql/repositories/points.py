"""Points and rebates in SQL: a user's balance, points orders and rebate orders on their
shard, and the rebate rules of the configuration database."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, delete, select, update

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_ignore_any, insert_missing, upsert
from raffle.adapters.sql.tables import config as tables
from raffle.adapters.sql.tables.points import PointsTables
from raffle.domain.points import InsufficientPoints, PointsAccount, PointsKind, PointsOrder
from raffle.domain.rebates import RebateOrder, RebateRule


class SqlPointsRepository:
    def __init__(self, connection: SqlConnection, tables: PointsTables) -> None:
        self._connection = connection
        self._accounts = tables.points_account
        self._orders = tables.points_order

    async def account(self, user_id: str) -> PointsAccount | None:
        a = self._accounts
        row = (await self._connection.execute(select(a).where(a.c.user_id == user_id))).first()
        return None if row is None else PointsAccount(user_id, row.total, row.available)

    async def add(self, order: PointsOrder) -> bool:
        # The order first: its unique (user_id, out_business_no) makes a repeat a no-op
        # before the balance is touched, in the transaction that changes the balance.
        row = {
            "order_id": order.order_id,
            "user_id": order.user_id,
            "kind": order.kind.value,
            "amount": order.amount,
            "out_business_no": order.out_business_no,
            "reason": order.reason,
            "created_at": order.created_at,
        }
        statement = insert_ignore_any(self._connection.dialect, self._orders, row)
        if (await self._connection.execute(statement)).rowcount != 1:
            return False
        if order.kind is PointsKind.EARN:
            await self._earn(order.user_id, order.amount)
        elif not await self._spend(order.user_id, order.amount):
            # Undone in this transaction, so a caller inside a larger one can go on with it.
            o = self._orders
            await self._connection.execute(delete(o).where(o.c.order_id == order.order_id))
            raise InsufficientPoints(f"spending {order.amount} points needs that many available")
        return True

    async def _earn(self, user_id: str, amount: int) -> None:
        a = self._accounts
        empty = {"user_id": user_id, "total": 0, "available": 0}
        await self._connection.execute(insert_missing(self._connection.dialect, a, empty))
        await self._connection.execute(
            update(a)
            .where(a.c.user_id == user_id)
            .values(total=a.c.total + amount, available=a.c.available + amount)
        )

    async def _spend(self, user_id: str, amount: int) -> bool:
        # The guard in the WHERE clause, not read-then-write: concurrent spends queue on the
        # row lock and each sees the balance its predecessor left.
        a = self._accounts
        result = await self._connection.execute(
            update(a)
            .where(a.c.user_id == user_id, a.c.available >= amount)
            .values(available=a.c.available - amount)
        )
        return result.rowcount == 1

    async def by_business_no(self, user_id: str, out_business_no: str) -> PointsOrder | None:
        o = self._orders
        query = select(o).where(o.c.user_id == user_id, o.c.out_business_no == out_business_no)
        row = (await self._connection.execute(query)).first()
        return None if row is None else _points_order(row)

    async def history(self, user_id: str, before: str | None, limit: int) -> list[PointsOrder]:
        o = self._orders
        query = select(o).where(o.c.user_id == user_id).order_by(o.c.order_id.desc()).limit(limit)
        if before is not None:
            query = query.where(o.c.order_id < before)
        return [_points_order(row) for row in await self._connection.execute(query)]


class SqlRebateOrderRepository:
    def __init__(self, connection: SqlConnection, tables: PointsTables) -> None:
        self._connection = connection
        self._table = tables.rebate_order

    async def add(self, order: RebateOrder) -> bool:
        row = {
            "order_id": order.order_id,
            "user_id": order.user_id,
            "activity_id": order.activity_id,
            "behaviour": order.behaviour,
            "business_key": order.business_key,
            "sku": order.sku,
            "points": order.points,
            "created_at": order.created_at,
        }
        # A concurrent twin waits on the first one's uncommitted key, then inserts nothing.
        statement = insert_ignore_any(self._connection.dialect, self._table, row)
        return (await self._connection.execute(statement)).rowcount == 1

    async def get(
        self, user_id: str, activity_id: int, behaviour: str, business_key: str
    ) -> RebateOrder | None:
        t = self._table
        query = select(t).where(
            t.c.user_id == user_id,
            t.c.activity_id == activity_id,
            t.c.behaviour == behaviour,
            t.c.business_key == business_key,
        )
        row = (await self._connection.execute(query)).first()
        if row is None:
            return None
        return RebateOrder(
            order_id=row.order_id,
            user_id=row.user_id,
            activity_id=row.activity_id,
            behaviour=row.behaviour,
            business_key=row.business_key,
            sku=row.sku,
            points=row.points,
            created_at=row.created_at,
        )

    async def keys(
        self, user_id: str, activity_id: int, behaviour: str, first: str, last: str
    ) -> list[str]:
        t = self._table
        query = (
            select(t.c.business_key)
            .where(
                t.c.user_id == user_id,
                t.c.activity_id == activity_id,
                t.c.behaviour == behaviour,
                t.c.business_key.between(first, last),
            )
            .order_by(t.c.business_key)
        )
        return list((await self._connection.execute(query)).scalars().all())


class SqlRebateRuleRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def save(self, rule: RebateRule) -> None:
        row = {
            "activity_id": rule.activity_id,
            "behaviour": rule.behaviour,
            "sku": rule.sku,
            "points": rule.points,
            "description": rule.description,
            "enabled": rule.enabled,
        }
        await self._connection.execute(upsert(self._connection.dialect, tables.rebate_rule, row))

    async def for_activity(self, activity_id: int) -> list[RebateRule]:
        t = tables.rebate_rule
        query = select(t).where(t.c.activity_id == activity_id).order_by(t.c.behaviour)
        return [_rule(row) for row in await self._connection.execute(query)]

    async def all(self) -> list[RebateRule]:
        t = tables.rebate_rule
        query = select(t).order_by(t.c.activity_id, t.c.behaviour)
        return [_rule(row) for row in await self._connection.execute(query)]


def _rule(row: Row[Any]) -> RebateRule:
    return RebateRule(
        activity_id=row.activity_id,
        behaviour=row.behaviour,
        sku=row.sku,
        points=row.points,
        description=row.description,
        enabled=row.enabled,
    )


def _points_order(row: Row[Any]) -> PointsOrder:
    return PointsOrder(
        order_id=row.order_id,
        user_id=row.user_id,
        kind=PointsKind(row.kind),
        amount=row.amount,
        out_business_no=row.out_business_no,
        reason=row.reason,
        created_at=row.created_at,
    )
