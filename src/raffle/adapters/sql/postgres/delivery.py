"""A delivery batch's statements on PostgreSQL (postgres/statements): settling the award records,
recording the deliveries and crediting chances, each ONE statement over arrays whatever the
batch's size.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cache

from sqlalchemy import Table

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.postgres.statements import PgStatements
from raffle.adapters.sql.repositories.delivery import SqlDeliveryRepository
from raffle.adapters.sql.repositories.quotas import SqlQuotaRepository
from raffle.adapters.sql.repositories.top_ups import SqlTopUpRepository
from raffle.adapters.sql.repositories.wins import SqlWinRepository
from raffle.adapters.sql.tables.draw_rows import naive
from raffle.adapters.sql.tables.shard import ShardTables
from raffle.domain.delivery import Grant
from raffle.domain.draws import WinState
from raffle.domain.quota import TopUpOrder
from raffle.service.ports import Credit


@cache
def _settle_sql(w: Table) -> str:
    # Locked first, in key order, as every batch does: two batches on a shard never deadlock.
    done = WinState.COMPLETED.value
    return (
        f"WITH l AS (SELECT order_id FROM {w.name} "  # noqa: S608
        "WHERE order_id = ANY($1::varchar[]) AND state = $2 ORDER BY order_id FOR UPDATE) "
        f"UPDATE {w.name} AS w SET state = $3, "
        # A completed delivery has no failure to tell: the last error goes with it.
        f"error_code = CASE WHEN $3::varchar = '{done}' THEN NULL ELSE w.error_code END, "
        f"error_message = CASE WHEN $3::varchar = '{done}' THEN NULL ELSE w.error_message END "
        "FROM l WHERE w.order_id = l.order_id RETURNING w.order_id"
    )


class PgWinRepository(SqlWinRepository):
    def __init__(self, connection: SqlConnection, tables: ShardTables, sql: PgStatements):
        super().__init__(connection, tables)
        self._sql = sql

    async def settle_many(
        self, order_ids: Sequence[str], expected: WinState, new: WinState
    ) -> set[str]:
        rows = await self._sql.fetch(
            _settle_sql(self._table), list(order_ids), expected.value, new.value
        )
        return {row[0] for row in rows}

    async def present(self, order_ids: Sequence[str]) -> set[str]:
        query = f"SELECT order_id FROM {self._table.name} WHERE order_id = ANY($1::varchar[])"  # noqa: S608
        return {row[0] for row in await self._sql.fetch(query, list(order_ids))}


@cache
def _deliveries_sql(d: Table) -> str:
    return (
        f"INSERT INTO {d.name} (order_id, user_id, award_id, kind, message_id, delivered_at) "  # noqa: S608
        "SELECT o, u, a, k, m, $6::timestamp FROM unnest($1::varchar[], $2::varchar[], "
        "$3::bigint[], $4::varchar[], $5::varchar[]) AS r(o, u, a, k, m) "
        "ON CONFLICT (order_id) DO NOTHING RETURNING order_id"
    )


class PgDeliveryRepository(SqlDeliveryRepository):
    def __init__(self, connection: SqlConnection, table: Table, wins: Table, sql: PgStatements):
        super().__init__(connection, table, wins)
        self._sql = sql

    async def add_many(self, grants: Sequence[Grant], at: datetime) -> set[str]:
        first: dict[str, Grant] = {}
        for g in grants:  # an order twice in the list: one row, the first
            first.setdefault(g.order_id, g)
        unique = list(first.values())
        columns = (
            [g.order_id for g in unique],
            [g.user_id for g in unique],
            [g.award.id for g in unique],
            [g.award.kind.value for g in unique],
            [g.message_id for g in unique],
        )
        rows = await self._sql.fetch(_deliveries_sql(self._table), *columns, naive(at))
        return {row[0] for row in rows}


@cache
def _top_ups_sql(t: Table) -> str:
    # Any unique key, as `add`: (user_id, out_business_no) is the one a repeat hits.
    return (
        f"INSERT INTO {t.name} (order_id, user_id, activity_id, sku, out_business_no, "  # noqa: S608
        "total, day, month, created_at) SELECT * FROM unnest($1::varchar[], $2::varchar[], "
        "$3::bigint[], $4::bigint[], $5::varchar[], $6::int[], $7::int[], $8::int[], "
        "$9::timestamp[]) ON CONFLICT DO NOTHING RETURNING order_id"
    )


class PgTopUpRepository(SqlTopUpRepository):
    def __init__(self, connection: SqlConnection, tables: ShardTables, sql: PgStatements):
        super().__init__(connection, tables)
        self._sql = sql

    async def add_many(self, orders: Sequence[TopUpOrder]) -> set[str]:
        first: dict[tuple[str, str], TopUpOrder] = {}
        for o in orders:  # a number twice in the list: the first one counts
            first.setdefault((o.user_id, o.out_business_no), o)
        unique = list(first.values())
        columns = (
            [o.order_id for o in unique],
            [o.user_id for o in unique],
            [o.activity_id for o in unique],
            [o.sku for o in unique],
            [o.out_business_no for o in unique],
            [o.pack.total for o in unique],
            [o.pack.day for o in unique],
            [o.pack.month for o in unique],
            [naive(o.at) for o in unique],
        )
        rows = await self._sql.fetch(_top_ups_sql(self._table), *columns)
        return {row[0] for row in rows}


@cache
def _accounts_sql(a: Table) -> str:
    # Made with the credit if missing, else raised; rows in the arrays' (key) order.
    return (
        f"INSERT INTO {a.name} AS t (user_id, activity_id, total, total_left, day, month) "  # noqa: S608
        "SELECT u, i, n, n, d, m FROM unnest($1::varchar[], $2::bigint[], $3::int[], "
        "$4::int[], $5::int[]) AS r(u, i, n, d, m) ON CONFLICT (user_id, activity_id) DO UPDATE "
        "SET total = t.total + excluded.total, total_left = t.total_left + excluded.total_left, "
        "day = t.day + excluded.day, month = t.month + excluded.month"
    )


@cache
def _periods_sql(day: Table, month: Table) -> str:
    # After the accounts, whose locks every writer of these rows takes first.
    def raised(table: Table, period: str, first: int) -> str:
        p = [f"${first + i}" for i in range(4)]
        return (
            f"UPDATE {table.name} AS t SET {period}_left = t.{period}_left + r.n "  # noqa: S608
            f"FROM unnest({p[0]}::varchar[], {p[1]}::bigint[], {p[2]}::varchar[], "
            f"{p[3]}::int[]) AS r(u, i, p, n) "
            f"WHERE t.user_id = r.u AND t.activity_id = r.i AND t.{period} = r.p"
        )

    return f"WITH d AS ({raised(day, 'day', 1)}) {raised(month, 'month', 5)}"


class PgQuotaRepository(SqlQuotaRepository):
    def __init__(self, connection: SqlConnection, tables: ShardTables, sql: PgStatements):
        super().__init__(connection, tables)
        self._sql = sql

    async def credit_many(self, credits: Sequence[Credit]) -> None:
        accounts, days, months = self._summed(credits)
        if not accounts:
            return
        ordered = sorted(accounts.items())
        await self._sql.execute(
            _accounts_sql(self._account),
            *_columns([(*key, *n) for key, n in ordered], 5),
        )
        if days or months:
            await self._sql.execute(
                _periods_sql(self._day, self._month),
                *_columns([(*key, n) for key, n in sorted(days.items())], 4),
                *_columns([(*key, n) for key, n in sorted(months.items())], 4),
            )


def _columns(rows: list[tuple[object, ...]], width: int) -> list[list[object]]:
    """Rows as a list per column, for `unnest`."""
    return [[row[i] for row in rows] for i in range(width)]
