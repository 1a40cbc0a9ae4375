"""A user's chances on their shard: the quota account, with its day and month rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Insert,
    Select,
    Table,
    Update,
    and_,
    bindparam,
    select,
    update,
)

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import (
    insert_ignore,
    insert_missing,
    insert_missing_for,
)
from raffle.adapters.sql.tables.shard import ShardTables
from raffle.domain.quota import QuotaAccount, QuotaPack
from raffle.service.ports import Credit

Summed = dict[tuple[Any, ...], Any]  # key columns -> what is added

Key = Mapping[str, Any]  # column name -> value, naming one row

# The draw runs the same few statements over and over: each is built once per table (and
# dialect) with bind parameters, so a draw pays for executing them, not for building them.


def _where(table: Table, key: Key) -> list[ColumnElement[bool]]:
    return [table.c[name] == value for name, value in key.items()]


def _keyed(table: Table, names: tuple[str, ...]) -> list[ColumnElement[bool]]:
    return [table.c[name] == bindparam(f"k_{name}") for name in names]


def _params(key: Key) -> dict[str, Any]:
    return {f"k_{name}": value for name, value in key.items()}


@cache
def _account_query(a: Table, d: Table, m: Table) -> Select[Any]:
    """The account with today's and this month's rows, if they exist yet."""

    def of_account(t: Table, period: str) -> ColumnElement[bool]:
        return and_(
            t.c.user_id == a.c.user_id,
            t.c.activity_id == a.c.activity_id,
            t.c[period] == bindparam(f"k_{period}"),
        )

    joined = a.outerjoin(d, of_account(d, "day")).outerjoin(m, of_account(m, "month"))
    return (
        select(a, d.c.day_left, m.c.month_left)
        .select_from(joined)
        .where(*_keyed(a, ("user_id", "activity_id")))
    )


@cache
def _take_statement(table: Table, column: str, names: tuple[str, ...]) -> Update:
    left = table.c[column]
    return update(table).where(*_keyed(table, names), left > 0).values({left: left - 1})


@cache
def _credit_statements(
    dialect: str, a: Table, d: Table, m: Table
) -> tuple[Insert, Update, Update, Update]:
    """Statements for `credit_many`, each run once with a list of parameters: the accounts
    made if missing, then raised, then the running days and months raised."""
    key: dict[str, Any] = {
        "user_id": bindparam("k_user_id"),
        "activity_id": bindparam("k_activity_id"),
    }
    empty = {**key, "total": 0, "total_left": 0, "day": 0, "month": 0}
    raise_account = (
        update(a)
        .where(*_keyed(a, ("user_id", "activity_id")))
        .values(
            total=a.c.total + bindparam("n_total"),
            total_left=a.c.total_left + bindparam("n_total"),
            day=a.c.day + bindparam("n_day"),
            month=a.c.month + bindparam("n_month"),
        )
    )

    def raise_left(table: Table, period: str) -> Update:
        left = table.c[f"{period}_left"]
        names = ("user_id", "activity_id", period)
        return update(table).where(*_keyed(table, names)).values({left: left + bindparam("n")})

    return (
        insert_missing_for(dialect, a, empty),
        raise_account,
        raise_left(d, "day"),
        raise_left(m, "month"),
    )


@cache
def _start_statement(
    dialect: str, table: Table, column: str, names: tuple[str, ...], account: Table, allowance: str
) -> Insert:
    starting = (
        select(account.c[allowance])
        .where(*_keyed(account, ("user_id", "activity_id")))
        .scalar_subquery()
    )
    row: dict[str, Any] = {name: bindparam(f"k_{name}") for name in names}
    row[column] = starting
    return insert_missing_for(dialect, table, row)


class SqlQuotaRepository:
    """The account holds the total and the day and month allowances; a day row (a month
    row) holds what is left of one calendar day (month), made on its first draw."""

    def __init__(self, connection: SqlConnection, tables: ShardTables) -> None:
        self._connection = connection
        self._account = tables.quota_account
        self._day = tables.quota_day
        self._month = tables.quota_month

    async def get(
        self, user_id: str, activity_id: int, day: str, month: str
    ) -> QuotaAccount | None:
        query = _account_query(self._account, self._day, self._month)
        params = {
            "k_user_id": user_id,
            "k_activity_id": activity_id,
            "k_day": day,
            "k_month": month,
        }
        row = (await self._connection.execute(query, params)).first()
        if row is None:
            return None
        return QuotaAccount(
            user_id=user_id,
            activity_id=activity_id,
            total=row.total,
            total_left=row.total_left,
            day=row.day,
            day_left=row.day if row.day_left is None else row.day_left,
            month=row.month,
            month_left=row.month if row.month_left is None else row.month_left,
        )

    async def open(self, user_id: str, activity_id: int, pack: QuotaPack | None) -> bool:
        total, day, month = (pack.total, pack.day, pack.month) if pack else (0, 0, 0)
        row = {
            "user_id": user_id,
            "activity_id": activity_id,
            "total": total,
            "total_left": total,
            "day": day,
            "month": month,
        }
        statement = insert_ignore(self._connection.dialect, self._account, row)
        return (await self._connection.execute(statement)).rowcount == 1

    async def credit(
        self, user_id: str, activity_id: int, pack: QuotaPack, day: str, month: str
    ) -> None:
        a = self._account
        account = {"user_id": user_id, "activity_id": activity_id}
        # Not `open`: on MariaDB its INSERT IGNORE takes a shared lock on an existing row,
        # and two credits that both hold it deadlock when they come to update it.
        empty = {**account, "total": 0, "total_left": 0, "day": 0, "month": 0}
        await self._connection.execute(insert_missing(self._connection.dialect, a, empty))
        await self._connection.execute(
            update(a)
            .where(*_where(a, account))
            .values(
                total=a.c.total + pack.total,
                total_left=a.c.total_left + pack.total,
                day=a.c.day + pack.day,
                month=a.c.month + pack.month,
            )
        )
        # A running day (month) gets the pack's share now; one not started yet begins at
        # the raised allowance anyway.
        for table, column, when, added in (
            (self._day, "day_left", {"day": day}, pack.day),
            (self._month, "month_left", {"month": month}, pack.month),
        ):
            if added:
                await self._add(table, column, {**account, **when}, added)

    async def credit_many(self, credits: Sequence[Credit]) -> None:
        accounts, days, months = self._summed(credits)
        if not accounts:
            return
        make, raise_account, raise_day, raise_month = _credit_statements(
            self._connection.dialect.name, self._account, self._day, self._month
        )
        ordered = sorted(accounts.items())
        keys = [{"k_user_id": u, "k_activity_id": a} for (u, a), _ in ordered]
        await self._connection.execute(make, keys)
        await self._connection.execute(
            raise_account,
            [
                {**key, "n_total": n[0], "n_day": n[1], "n_month": n[2]}
                for key, (_, n) in zip(keys, ordered, strict=True)
            ],
        )
        for statement, period, running in (
            (raise_day, "day", days),
            (raise_month, "month", months),
        ):
            if running:
                params = [
                    {"k_user_id": u, "k_activity_id": a, f"k_{period}": p, "n": n}
                    for (u, a, p), n in sorted(running.items())
                ]
                await self._connection.execute(statement, params)

    @staticmethod
    def _summed(credits: Sequence[Credit]) -> tuple[Summed, Summed, Summed]:
        """The credits summed per account (total, day, month added), per running day and per
        running month: each row is then locked once, in key order by every batch."""
        accounts: dict[tuple[Any, ...], list[int]] = {}
        days: dict[tuple[Any, ...], int] = {}
        months: dict[tuple[Any, ...], int] = {}
        for user_id, activity_id, pack, day, month in credits:
            added = accounts.setdefault((user_id, activity_id), [0, 0, 0])
            added[0] += pack.total
            added[1] += pack.day
            added[2] += pack.month
            for running, key, added_to in ((days, day, pack.day), (months, month, pack.month)):
                if added_to:
                    at = (user_id, activity_id, key)
                    running[at] = running.get(at, 0) + added_to
        return accounts, days, months

    async def consume(
        self, user_id: str, activity_id: int, day: str, month: str
    ) -> QuotaAccount | None:
        """Take one chance from the total, the day and the month; None when one of them is
        exhausted, and then what was taken is given back in this same transaction, so that
        committing it is harmless.

        The total goes first: its conditional update locks the account row, which makes one
        user's concurrent draws in the activity take turns (SQLite: all writers take turns)
        until commit, so the day and month rows are made and read by one draw at a time.
        """
        account = {"user_id": user_id, "activity_id": activity_id}
        if not await self._take(self._account, "total_left", account):
            return None
        a = self._account
        limits = (
            (self._day, "day_left", {**account, "day": day}, a.c.day),
            (self._month, "month_left", {**account, "month": month}, a.c.month),
        )
        taken: list[tuple[Table, str, Key]] = [(a, "total_left", account)]
        for table, column, key, allowance in limits:
            if not await self._take(table, column, key):
                # No row for this day (month) yet, or nothing left in it: the first draw of
                # the day makes the row at the allowance and takes again. Most draws find the
                # row and skip this. (Under READ COMMITTED the refused update takes no gap
                # lock, so making the row after it cannot deadlock on MariaDB.)
                await self._start(table, column, key, allowance, account)
                if not await self._take(table, column, key):
                    for undo in taken:
                        await self._add(*undo, 1)
                    return None
            taken.append((table, column, key))
        return await self.get(user_id, activity_id, day, month)

    async def _start(
        self, table: Table, column: str, key: Key, allowance: ColumnElement[int], account: Key
    ) -> None:
        # The new day (month) begins at the account's allowance.
        statement = _start_statement(
            self._connection.dialect.name, table, column, tuple(key), self._account, allowance.name
        )
        await self._connection.execute(statement, _params(key))

    async def _take(self, table: Table, column: str, key: Key) -> bool:
        statement = _take_statement(table, column, tuple(key))
        result = await self._connection.execute(statement, _params(key))
        return result.rowcount == 1

    async def _add(self, table: Table, column: str, key: Key, count: int) -> None:
        left = table.c[column]
        await self._connection.execute(
            update(table).where(*_where(table, key)).values({left: left + count})
        )
