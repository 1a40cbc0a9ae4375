"""A user's rows on their shard: quota account, top-ups, raffle orders, wins, outbox."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
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
    func,
    insert,
    or_,
    select,
    update,
)

from raffle.adapters.sql import draw_series
from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.shard_tables import ERROR_MESSAGE_LENGTH, ShardTables
from raffle.adapters.sql.upsert import (
    insert_ignore,
    insert_ignore_any,
    insert_missing,
    insert_missing_for,
)
from raffle.domain.delivery import RETRY_STEPS, retry_delay
from raffle.domain.draws import (
    DeliveryError,
    OrderState,
    OutboxMessage,
    RaffleOrder,
    Win,
    WinState,
)
from raffle.domain.quota import QuotaAccount, QuotaPack, TopUpOrder
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
def _insert(table: Table) -> Insert:
    return insert(table)


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


class SqlTopUpRepository:
    def __init__(self, connection: SqlConnection, tables: ShardTables) -> None:
        self._connection = connection
        self._table = tables.top_up_order

    async def add(
        self,
        *,
        order_id: str,
        user_id: str,
        activity_id: int,
        sku: int,
        out_business_no: str,
        pack: QuotaPack,
        at: datetime,
    ) -> bool:
        order = TopUpOrder(order_id, user_id, activity_id, sku, out_business_no, pack, at)
        row = _top_up_row(order)
        # Any unique key: (user_id, out_business_no) is the one a repeat hits.
        statement = insert_ignore_any(self._connection.dialect, self._table, row)
        return (await self._connection.execute(statement)).rowcount == 1

    async def add_many(self, orders: Sequence[TopUpOrder]) -> set[str]:
        t = self._table
        # Both columns of the unique index, each as a list: the index finds them, and any
        # other user's same number found on the way is told apart below.
        query = select(t.c.user_id, t.c.out_business_no).where(
            t.c.user_id.in_({o.user_id for o in orders}),
            t.c.out_business_no.in_({o.out_business_no for o in orders}),
        )
        used = {(u, n) for u, n in await self._connection.execute(query)}
        rows: list[dict[str, Any]] = []
        for o in orders:
            if (o.user_id, o.out_business_no) not in used:
                used.add((o.user_id, o.out_business_no))
                rows.append(_top_up_row(o))
        if rows:
            await self._connection.execute(_insert(t), rows)
        return {row["order_id"] for row in rows}

    async def exists(self, user_id: str, out_business_no: str) -> bool:
        t = self._table
        query = select(t.c.order_id).where(
            t.c.user_id == user_id, t.c.out_business_no == out_business_no
        )
        return (await self._connection.execute(query)).first() is not None


def _top_up_row(order: TopUpOrder) -> dict[str, Any]:
    return {
        "order_id": order.order_id,
        "user_id": order.user_id,
        "activity_id": order.activity_id,
        "sku": order.sku,
        "out_business_no": order.out_business_no,
        "total": order.pack.total,
        "day": order.pack.day,
        "month": order.pack.month,
        "created_at": order.at,
    }


class SqlOrderRepository:
    def __init__(self, connection: SqlConnection, tables: ShardTables) -> None:
        self._connection = connection
        self._orders = tables.raffle_order
        self._wins = tables.award_record

    async def add(self, order: RaffleOrder) -> None:
        row = {
            "order_id": order.order_id,
            "user_id": order.user_id,
            "activity_id": order.activity_id,
            "strategy_id": order.strategy_id,
            "draw_count": order.draw_count,
            "state": order.state.value,
            "request_key": order.request_key,
            "created_at": order.created_at,
        }
        await self._connection.execute(_insert(self._orders), row)

    def expect(self, user_id: str, request_key: str) -> None:
        """Nothing to do: by_request runs its own statement."""

    async def by_request(self, user_id: str, request_key: str) -> RaffleOrder | None:
        o = self._orders
        query = select(o).where(o.c.user_id == user_id, o.c.request_key == request_key)
        row = (await self._connection.execute(query)).first()
        return None if row is None else _order(row._mapping, o)

    async def per_minute(self, activity_id: int, since: datetime) -> dict[datetime, int]:
        return await draw_series.per_minute(self._connection, self._orders, activity_id, since)

    async def history(
        self, user_id: str, activity_id: int | None, before: str | None, limit: int
    ) -> Sequence[tuple[RaffleOrder, Win]]:
        o, w = self._orders, self._wins
        query = (
            select(o, w)
            .join(w, w.c.order_id == o.c.order_id)
            .where(o.c.user_id == user_id)
            .order_by(o.c.order_id.desc())
            .limit(limit)
        )
        if activity_id is not None:
            query = query.where(o.c.activity_id == activity_id)
        if before is not None:
            query = query.where(o.c.order_id < before)
        rows = await self._connection.execute(query)
        return [(_order(row._mapping, o), _win(row._mapping, w)) for row in rows]


class SqlWinRepository:
    def __init__(self, connection: SqlConnection, tables: ShardTables) -> None:
        self._connection = connection
        self._table = tables.award_record

    async def add(self, win: Win) -> None:
        row = {
            "order_id": win.order_id,
            "user_id": win.user_id,
            "activity_id": win.activity_id,
            "strategy_id": win.strategy_id,
            "award_id": win.award_id,
            "points": win.points,
            "rule": win.rule,
            "state": win.state.value,
            "created_at": win.created_at,
        }
        await self._connection.execute(_insert(self._table), row)

    async def get(self, order_id: str) -> Win | None:
        w = self._table
        row = (await self._connection.execute(select(w).where(w.c.order_id == order_id))).first()
        return None if row is None else _win(row._mapping, w)

    async def count(self, strategy_id: int, award_id: int) -> int:
        w = self._table
        query = (
            select(func.count())
            .select_from(w)
            .where(w.c.strategy_id == strategy_id, w.c.award_id == award_id)
        )
        return int(await self._connection.scalar(query) or 0)

    async def tally(self, activity_id: int) -> dict[tuple[int, WinState], int]:
        w = self._table
        query = (
            select(w.c.award_id, w.c.state, func.count())
            .where(w.c.activity_id == activity_id)
            .group_by(w.c.award_id, w.c.state)
        )
        rows = await self._connection.execute(query)
        return {(int(award), WinState(state)): int(n) for award, state, n in rows}

    async def present(self, order_ids: Sequence[str]) -> set[str]:
        w = self._table
        query = select(w.c.order_id).where(w.c.order_id.in_(order_ids))
        return set((await self._connection.execute(query)).scalars().all())

    async def settle(self, order_id: str, expected: WinState, new: WinState) -> bool:
        w = self._table
        statement = (
            update(w)
            .where(w.c.order_id == order_id, w.c.state == expected.value)
            .values(state=new.value, **_forgotten(new))
        )
        return (await self._connection.execute(statement)).rowcount == 1

    async def note_error(self, order_id: str, error: DeliveryError | None) -> bool:
        w = self._table
        values = {
            "error_code": None if error is None else error.code[:64],
            "error_message": None if error is None else error.message[:ERROR_MESSAGE_LENGTH],
        }
        statement = (
            update(w)
            .where(w.c.order_id == order_id, w.c.state == WinState.CREATE.value)
            .values(**values)
        )
        return (await self._connection.execute(statement)).rowcount == 1

    async def settle_many(
        self, order_ids: Sequence[str], expected: WinState, new: WinState
    ) -> set[str]:
        # Lock first, in order, then move what was found: UPDATE ... RETURNING would do it
        # in one statement, but MariaDB has no RETURNING on UPDATE.
        w = self._table
        query = (
            select(w.c.order_id)
            .where(w.c.order_id.in_(order_ids), w.c.state == expected.value)
            .order_by(w.c.order_id)
            .with_for_update()
        )
        found = list((await self._connection.execute(query)).scalars().all())
        if found:
            await self._connection.execute(
                update(w).where(w.c.order_id.in_(found)).values(state=new.value, **_forgotten(new))
            )
        return set(found)

    async def in_state(
        self, state: WinState, limit: int, activity_id: int | None = None
    ) -> list[Win]:
        w = self._table
        query = select(w).where(w.c.state == state.value).order_by(w.c.created_at).limit(limit)
        if activity_id is not None:
            query = query.where(w.c.activity_id == activity_id)
        return [_win(row._mapping, w) for row in await self._connection.execute(query)]

    async def states(self) -> dict[WinState, int]:
        w = self._table
        query = select(w.c.state, func.count()).group_by(w.c.state)
        return {WinState(s): n for s, n in await self._connection.execute(query)}


class SqlOutboxRepository:
    def __init__(self, connection: SqlConnection, tables: ShardTables) -> None:
        self._connection = connection
        self._table = tables.outbox

    async def add(self, message: OutboxMessage) -> None:
        row = {
            "message_id": message.message_id,
            "topic": message.topic,
            "message_key": message.key,
            "payload": message.payload,
            "state": "create",
            "attempts": 0,
            "created_at": message.created_at,
            "updated_at": message.created_at,
        }
        await self._connection.execute(_insert(self._table), row)

    async def claim(
        self, now: datetime, limit: int, stale_before: datetime | None = None
    ) -> list[OutboxMessage]:
        # The claim is its own short transaction: rows locked by another claimer are skipped
        # (SKIP LOCKED; SQLite has one writer and takes turns), and once committed the rows
        # read `sending`, which no relay claims again. So no lock is held across a slow
        # publish, and two relays never publish one row at once unless the compensation job
        # finds it still `sending` after its age (a relay that died), which must exceed the
        # publish timeout.
        t = self._table
        due = _stale(t, stale_before) if stale_before is not None else _due(t, now)
        query = (
            select(t)
            .where(due)
            .order_by(t.c.updated_at)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        rows = (await self._connection.execute(query)).all()
        if not rows:
            return []
        ids = [row.message_id for row in rows]
        await self._connection.execute(
            update(t)
            .where(t.c.message_id.in_(ids))
            .values(state="sending", attempts=t.c.attempts + 1, updated_at=now)
        )
        return [
            OutboxMessage(row.message_id, row.topic, row.message_key, row.payload, row.created_at)
            for row in rows
        ]

    async def mark(self, message_ids: Sequence[str], published: bool, now: datetime) -> None:
        t = self._table
        state = "published" if published else "failed"
        await self._connection.execute(
            update(t)
            .where(t.c.message_id.in_(message_ids), t.c.state == "sending")
            .values(state=state, updated_at=now)
        )

    async def unpublished(self, before: datetime) -> int:
        t = self._table
        query = (
            select(func.count())
            .select_from(t)
            .where(t.c.state != "published", t.c.created_at < before)
        )
        return int(await self._connection.scalar(query) or 0)

    async def states(self) -> dict[str, int]:
        t = self._table
        query = select(t.c.state, func.count()).group_by(t.c.state)
        return {str(row[0]): int(row[1]) for row in await self._connection.execute(query)}


def _due(t: Table, now: datetime) -> ColumnElement[bool]:
    """New messages, and failed ones whose backoff after their attempts has passed."""

    def waited(attempts: int) -> ColumnElement[bool]:
        return t.c.updated_at <= now - timedelta(seconds=retry_delay(attempts))

    retries = [and_(t.c.attempts == n, waited(n)) for n in range(1, RETRY_STEPS)]
    retries.append(and_(t.c.attempts >= RETRY_STEPS, waited(RETRY_STEPS)))
    return or_(t.c.state == "create", and_(t.c.state == "failed", or_(*retries)))


def _stale(t: Table, before: datetime) -> ColumnElement[bool]:
    return and_(t.c.state != "published", t.c.updated_at < before)


# Rows are read by column object: an order joined with its win has two of each of
# user_id, activity_id, strategy_id, state and created_at.


def _order(row: Mapping[Any, Any], o: Table) -> RaffleOrder:
    return RaffleOrder(
        order_id=row[o.c.order_id],
        user_id=row[o.c.user_id],
        activity_id=row[o.c.activity_id],
        strategy_id=row[o.c.strategy_id],
        draw_count=row[o.c.draw_count],
        state=OrderState(row[o.c.state]),
        created_at=row[o.c.created_at],
        request_key=row[o.c.request_key],
    )


def _forgotten(new: WinState) -> dict[str, None]:
    """A completed delivery has no failure to tell: the last error is cleared with it."""
    return {"error_code": None, "error_message": None} if new is WinState.COMPLETED else {}


def _win(row: Mapping[Any, Any], w: Table) -> Win:
    return Win(
        order_id=row[w.c.order_id],
        user_id=row[w.c.user_id],
        activity_id=row[w.c.activity_id],
        strategy_id=row[w.c.strategy_id],
        award_id=row[w.c.award_id],
        points=row[w.c.points],
        rule=row[w.c.rule],
        created_at=row[w.c.created_at],
        state=WinState(row[w.c.state]),
        error=(
            None
            if row[w.c.error_code] is None
            else DeliveryError(row[w.c.error_code], row[w.c.error_message] or "")
        ),
    )
