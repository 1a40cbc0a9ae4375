"""Activities, quota packs, SKUs and users in SQL: a row each, read back as domain objects;
and the turns campaign loads take."""

from __future__ import annotations

import json
from collections.abc import Collection
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Row, case, func, insert, select, update

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_ignore, upsert
from raffle.adapters.sql.tables import config as tables
from raffle.domain.activity import Activity, ActivityState
from raffle.domain.caps import Caps
from raffle.domain.quota import QuotaPack, Sku
from raffle.domain.scheduled import Schedule
from raffle.domain.users import StatusChange, User, UserStatus
from raffle.domain.winners_feed import FeedDisplay


class SqlActivityRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def save(self, activity: Activity) -> None:
        row = {
            "activity_id": activity.id,
            "name": activity.name,
            "description": activity.description,
            "strategy_id": activity.strategy_id,
            "begin_at": activity.begin_at,
            "end_at": activity.end_at,
            "time_zone": activity.time_zone,
            "state": activity.state.value,
            "welcome_pack": activity.welcome_pack,
            "award_num_limit": activity.caps.winners,
            "join_people_total_limit": activity.caps.participants,
            "perfect_activity": activity.caps.perfect,
            "join_code_required": activity.join_code_required,
            "show_winning_list": activity.winners_feed.value,
            "queued": activity.queued,
            "schedule": _schedule_text(activity.schedule),
        }
        # Reloading a campaign file must not reset a running activity: once stored, the
        # state moves only through compare_and_set.
        statement = upsert(self._connection.dialect, tables.activity, row, keep=("state",))
        await self._connection.execute(statement)

    async def get(self, activity_id: int) -> Activity | None:
        rows = await self._connection.execute(
            select(tables.activity).where(tables.activity.c.activity_id == activity_id)
        )
        row = rows.first()
        return None if row is None else _activity(row)

    async def all(self) -> list[Activity]:
        rows = await self._connection.execute(
            select(tables.activity).order_by(tables.activity.c.activity_id)
        )
        return [_activity(row) for row in rows]

    async def compare_and_set(
        self, activity_id: int, expected: ActivityState, new: ActivityState
    ) -> bool:
        result = await self._connection.execute(
            update(tables.activity)
            .where(
                tables.activity.c.activity_id == activity_id,
                tables.activity.c.state == expected.value,
            )
            .values(state=new.value)
        )
        # Matched rows, also on MySQL: SQLAlchemy connects with CLIENT_FOUND_ROWS there.
        return result.rowcount == 1

    async def using_strategy(self, strategy_id: int) -> list[Activity]:
        rows = await self._connection.execute(
            select(tables.activity)
            .where(tables.activity.c.strategy_id == strategy_id)
            .order_by(tables.activity.c.activity_id)
        )
        return [_activity(row) for row in rows]


class SqlPackRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def save(self, pack: QuotaPack) -> None:
        row = {"pack_id": pack.id, "total": pack.total, "day": pack.day, "month": pack.month}
        await self._connection.execute(upsert(self._connection.dialect, tables.quota_pack, row))

    async def get(self, pack_id: int) -> QuotaPack | None:
        rows = await self._connection.execute(
            select(tables.quota_pack).where(tables.quota_pack.c.pack_id == pack_id)
        )
        row = rows.first()
        return None if row is None else QuotaPack(row.pack_id, row.total, row.day, row.month)

    async def all(self) -> list[QuotaPack]:
        rows = await self._connection.execute(
            select(tables.quota_pack).order_by(tables.quota_pack.c.pack_id)
        )
        return [QuotaPack(row.pack_id, row.total, row.day, row.month) for row in rows]


class SqlSkuRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def save(self, sku: Sku) -> None:
        table = tables.sku
        row = {
            "sku": sku.sku,
            "activity_id": sku.activity_id,
            "pack_id": sku.pack_id,
            "stock": sku.stock,
            "stock_left": sku.stock,
            "price_points": sku.price_points,
        }
        # In the one statement, so a sale committed meanwhile is not written over.
        left = table.c.stock_left + (sku.stock - table.c.stock)
        kept_sales = case((left < 0, 0), else_=left)
        statement = upsert(
            self._connection.dialect, table, row, computed={"stock_left": kept_sales}
        )
        await self._connection.execute(statement)

    async def get(self, sku: int) -> Sku | None:
        rows = await self._connection.execute(select(tables.sku).where(tables.sku.c.sku == sku))
        row = rows.first()
        return None if row is None else _sku(row)

    async def for_activity(self, activity_id: int) -> list[Sku]:
        rows = await self._connection.execute(
            select(tables.sku)
            .where(tables.sku.c.activity_id == activity_id)
            .order_by(tables.sku.c.sku)
        )
        return [_sku(row) for row in rows]

    async def all(self) -> list[Sku]:
        rows = await self._connection.execute(select(tables.sku).order_by(tables.sku.c.sku))
        return [_sku(row) for row in rows]

    async def stock_left(self, sku: int) -> int:
        left = await self._connection.scalar(
            select(tables.sku.c.stock_left).where(tables.sku.c.sku == sku)
        )
        return 0 if left is None else int(left)

    async def take(self, sku: int) -> bool:
        # The guard in the WHERE clause: concurrent takes queue on the row lock and each
        # sees the count its predecessor left, so the stock never goes below zero.
        result = await self._connection.execute(
            update(tables.sku)
            .where(tables.sku.c.sku == sku, tables.sku.c.stock_left > 0)
            .values(stock_left=tables.sku.c.stock_left - 1)
        )
        return result.rowcount == 1

    async def give_back(self, sku: int) -> None:
        await self._connection.execute(
            update(tables.sku)
            .where(tables.sku.c.sku == sku, tables.sku.c.stock_left < tables.sku.c.stock)
            .values(stock_left=tables.sku.c.stock_left + 1)
        )


class SqlUserRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def add(self, user: User) -> bool:
        row = {
            "user_id": user.id,
            "password_hash": user.password_hash,
            "is_admin": user.is_admin,
            "created_at": datetime.now(UTC),  # for operators; the domain never reads it
        }
        statement = insert_ignore(self._connection.dialect, tables.user_account, row)
        result = await self._connection.execute(statement)
        return result.rowcount == 1

    async def get(self, user_id: str) -> User | None:
        rows = await self._connection.execute(
            select(tables.user_account).where(tables.user_account.c.user_id == user_id)
        )
        row = rows.first()
        return None if row is None else _user(row)

    async def many(self, user_ids: Collection[str]) -> dict[str, User]:
        table = tables.user_account
        rows = await self._connection.execute(select(table).where(table.c.user_id.in_(user_ids)))
        return {row.user_id: _user(row) for row in rows}

    async def first(self, limit: int) -> list[User]:
        table = tables.user_account
        rows = await self._connection.execute(select(table).order_by(table.c.user_id).limit(limit))
        return [_user(row) for row in rows]

    async def count(self) -> int:
        found = await self._connection.execute(
            select(func.count()).select_from(tables.user_account)
        )
        return int(found.scalar_one())

    async def set_status(self, user_id: str, status: UserStatus) -> bool:
        return await self._update(user_id, status=status.value)

    async def set_password_hash(self, user_id: str, password_hash: str) -> bool:
        return await self._update(user_id, password_hash=password_hash)

    async def record(self, change: StatusChange) -> None:
        row = {
            "user_id": change.user_id,
            "status": change.status.value,
            "reason": change.reason,
            "changed_by": change.by,
            "changed_at": change.at,
        }
        await self._connection.execute(insert(tables.account_status_change).values(row))

    async def changes(self, user_id: str, limit: int) -> list[StatusChange]:
        t = tables.account_status_change
        rows = await self._connection.execute(
            select(t).where(t.c.user_id == user_id).order_by(t.c.id.desc()).limit(limit)
        )
        return [
            StatusChange(r.user_id, UserStatus(r.status), r.reason, r.changed_by, r.changed_at)
            for r in rows
        ]

    async def _update(self, user_id: str, **values: object) -> bool:
        table = tables.user_account
        statement = update(table).where(table.c.user_id == user_id).values(**values)
        return (await self._connection.execute(statement)).rowcount == 1


def _user(row: Row[Any]) -> User:
    return User(row.user_id, row.password_hash, row.is_admin, UserStatus(row.status))


class SqlCampaignLoads:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def take_turn(self) -> None:
        # Writing the one row locks it until the transaction ends (on SQLite the transaction
        # holds the database's write lock from BEGIN IMMEDIATE anyway). A load waiting here
        # reads, from its next statement on, what the load before it committed: READ
        # COMMITTED takes a snapshot per statement on PostgreSQL and MariaDB.
        table = tables.campaign_load
        count = update(table).where(table.c.id == 1).values(loads=table.c.loads + 1)
        if (await self._connection.execute(count)).rowcount == 0:  # the row was deleted
            row = {"id": 1, "loads": 0}
            await self._connection.execute(insert_ignore(self._connection.dialect, table, row))
            await self._connection.execute(count)


def _activity(row: Row[Any]) -> Activity:
    return Activity(
        id=row.activity_id,
        name=row.name,
        strategy_id=row.strategy_id,
        begin_at=row.begin_at,
        end_at=row.end_at,
        time_zone=row.time_zone,
        description=row.description,
        state=ActivityState(row.state),
        welcome_pack=row.welcome_pack,
        caps=Caps(row.award_num_limit, row.join_people_total_limit, bool(row.perfect_activity)),
        join_code_required=bool(row.join_code_required),
        winners_feed=FeedDisplay(row.show_winning_list),
        queued=bool(row.queued),
        schedule=_schedule(row.schedule),
    )


def _schedule_text(schedule: Schedule | None) -> str | None:
    if schedule is None:
        return None
    s = schedule
    data = {"draw_at": _utc(s.draw_at), "cutoff": _utc(s.cutoff),
            "winners": s.winners, "per_person": s.per_person, "audience": s.audience}  # fmt: skip
    return json.dumps(data, sort_keys=True)


def _utc(at: datetime) -> str:
    return at.astimezone(UTC).isoformat()  # as the activity's window is stored


def _schedule(text: str | None) -> Schedule | None:
    if text is None:
        return None
    data = json.loads(text)
    return Schedule(
        datetime.fromisoformat(data["draw_at"]), datetime.fromisoformat(data["cutoff"]),
        int(data["winners"]), int(data["per_person"]), data["audience"],
    )  # fmt: skip


def _sku(row: Row[Any]) -> Sku:
    return Sku(row.sku, row.activity_id, row.pack_id, row.stock, row.price_points)
