"""The statements of postgres/draw_batch: one per step of a batch, over the shard tables of the
database that the batch's users live in.

Only our own table and column names are put into the SQL; every value is a bind parameter
($1, $2, ...), hence the `noqa: S608`s.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql

from raffle.adapters.sql.tables.draw_rows import (
    ORDER_COLUMNS,
    OUTBOX_COLUMNS,
    WIN_COLUMNS,
    WIN_READ_COLUMNS,
)
from raffle.adapters.sql.tables.shard import shard_tables

# A claim: a row of the type `draw_claim` (migration 0033), one array of them per table.
CLAIM_COLUMNS = ("user_id", "activity_id", "day", "month", "request_key", "n")
# A first visit: the claim's user, activity, day and month, its welcome pack, its position.
WELCOME_COLUMNS = ("user_id", "activity_id", "on_day", "in_month", "total", "day", "month", "n")
_WELCOME_TYPES = ("varchar", "bigint", "varchar", "varchar", "int", "int", "int", "int")
REPLAY_AT = 8  # the first of the order's columns in a row of consume_sql

_DIALECT = postgresql.dialect()  # type: ignore[no-untyped-call]


def unnest(table: Table | Sequence[str], columns: Sequence[str], first: int) -> str:
    """The rows of one typed array parameter per column, from `$first` on: `x(columns)`;
    typed as `table`'s columns, or by a list of types.

    The arrays pass through a subquery the planner keeps (OFFSET 0), so that it never sees
    their lengths: a custom plan then costs what the generic plan does, and PostgreSQL's
    plan cache settles on the generic plan after five executions. Seen, the lengths make
    every custom plan (a batch of 1-10) cheaper than the generic one (which assumes 10),
    and the statement was planned again at every execution."""
    types = [_sql_type(table, c) for c in columns] if isinstance(table, Table) else table
    arrays = ", ".join(f"${first + i}::{kind}[]" for i, kind in enumerate(types))
    names = [f"a{i}" for i in range(len(types))]
    return (
        f"(SELECT {arrays} OFFSET 0) AS p({', '.join(names)}), "
        f"unnest({', '.join(f'p.{n}' for n in names)}) AS x({', '.join(columns)})"
    )


@cache
def _sql_type(table: Table, column: str) -> str:
    return str(table.c[column].type.compile(dialect=_DIALECT))


def chained(statements: Sequence[str]) -> str:
    """Statements as one: all but the last as CTEs (each runs once, to completion)."""
    ctes = ", ".join(f"s{n} AS ({part})" for n, part in enumerate(statements[:-1]))
    return f"WITH {ctes} {statements[-1]}" if ctes else statements[-1]


# True of every claim (`n` numbers the batch's draws), but to the planner a range it has no
# statistics for, which it takes to hold for 1 row in 200: the accounts to update then look
# like a row or two, which it looks up by primary key, whatever the table's size. Taking the
# CTE for the 10 rows it assumes an array to hold, it hashed a scan of the whole (small)
# table instead, at every execution of the generic plan.
_ALWAYS = "x.n >= 0 AND x.n < 2147483647"


def _same(*columns: str) -> str:
    return " AND ".join(f"q.{c} = x.{c}" for c in columns)


@cache
def consume_sql(tables: tuple[int, ...]) -> str:
    """Per shard table in `tables`: the claims (`x`); their accounts locked in order (`l`);
    the guarded UPDATE of each account's total (`a`); its day and month rows made by their
    first draw or taken from if they have any left (`d`, `m`: a row missing means that limit is
    exhausted, as in pg_draw); and a row per claim with the order of its Idempotency-Key.

    The lookups by key are LATERAL with LIMIT 1 (which keeps the planner from flattening
    them into joins): asyncpg's prepared statement runs a generic plan (see `unnest`),
    made without the arrays' lengths and perhaps while the tables were small, which joined
    the orders by hashing a sequential scan of the whole table."""
    ctes = [cte for k, index in enumerate(tables) for cte in _consume_ctes(k, index)]
    selects = " UNION ALL ".join(_chances_sql(k, index) for k, index in enumerate(tables))
    return f"WITH {', '.join(ctes)} {selects}"


def _consume_ctes(k: int, index: int) -> list[str]:
    """The CTEs of the `k`th table of the statement, shard table `index`."""
    t = shard_tables(index)
    account, key = t.quota_account.name, ("user_id", "activity_id")
    claims = rows_of("draw_claim", k + 1)  # one array of rows, not an array per column
    return [
        f"x{k} AS (SELECT x.* FROM {claims})",  # noqa: S608
        f"l{k} AS (SELECT q.user_id, q.activity_id, x.day, x.month FROM x{k} AS x, LATERAL "  # noqa: S608
        f"(SELECT user_id, activity_id FROM {account} AS q WHERE {_same(*key)} LIMIT 1) AS q "
        f"WHERE {_ALWAYS} FOR UPDATE OF q)",
        f"a{k} AS (UPDATE {account} AS q SET total_left = q.total_left - 1 FROM l{k} AS x "  # noqa: S608
        f"WHERE {_same(*key)} AND q.total_left > 0 "
        "RETURNING q.user_id, q.activity_id, q.total, q.total_left, q.day, q.month, "
        "x.day AS on_day, x.month AS in_month)",
        f"d{k} AS ({_period_sql(t.quota_day, 'day', k)})",
        f"m{k} AS ({_period_sql(t.quota_month, 'month', k)})",
    ]


def _chances_sql(k: int, index: int) -> str:
    """A row per claim of the `k`th table, shard table `index`: what taking its chance found,
    and its replay if any."""
    found = ", ".join(f"o.{name}" for name in ORDER_COLUMNS)
    return (
        "SELECT x.n, l.user_id IS NOT NULL AS opened, a.total, a.total_left, "  # noqa: S608
        "a.day AS per_day, a.month AS per_month, d.day_left, m.month_left, "
        f"{found} FROM x{k} AS x "
        f"LEFT JOIN l{k} AS l ON l.user_id = x.user_id "
        f"LEFT JOIN a{k} AS a ON a.user_id = x.user_id "
        f"LEFT JOIN d{k} AS d ON d.user_id = x.user_id "
        f"LEFT JOIN m{k} AS m ON m.user_id = x.user_id "
        f"LEFT JOIN LATERAL (SELECT * FROM {shard_tables(index).raffle_order.name} AS o "
        "WHERE o.user_id = x.user_id AND o.request_key = x.request_key LIMIT 1) AS o ON true"
    )


def _period_sql(table: Table, period: str, k: int) -> str:
    # The day (month) of the claim comes along from `x`, through `l` and `a`'s RETURNING.
    left, key = f"{period}_left", {"day": "on_day", "month": "in_month"}[period]
    return (
        f"INSERT INTO {table.name} AS q (user_id, activity_id, {period}, {left}) "  # noqa: S608
        f"SELECT a.user_id, a.activity_id, a.{key}, a.{period} - 1 "
        f"FROM a{k} AS a WHERE a.{period} > 0 "
        f"ORDER BY a.user_id ON CONFLICT (user_id, activity_id, {period}) "
        f"DO UPDATE SET {left} = q.{left} - 1 WHERE q.{left} > 0 RETURNING q.user_id, q.{left}"
    )


@cache
def open_sql(tables: tuple[int, ...]) -> str:
    """Per shard table in `tables`: the first visits (`x`); their accounts made with the
    welcome pack less the draw's chance (`a`), unless one exists (opened meanwhile by another
    transaction: left as it is, and no row for its draw); the day and month rows of each
    account made here, with that chance taken (`d`, `m`); and a row per account made.

    A batch that finds an account being made by another transaction waits for it to end;
    every batch makes them in one order (by table, then by user), so no two batches each
    wait for an account that the other made."""
    ctes = [cte for k, index in enumerate(tables) for cte in _open_ctes(k, index)]
    selects = " UNION ALL ".join(
        "SELECT x.n, a.total, a.total_left, a.day AS per_day, a.month AS per_month, "  # noqa: S608
        f"d.day_left, m.month_left FROM x{k} AS x JOIN a{k} AS a ON a.user_id = x.user_id "
        f"JOIN d{k} AS d ON d.user_id = x.user_id JOIN m{k} AS m ON m.user_id = x.user_id"
        for k in range(len(tables))
    )
    return f"WITH {', '.join(ctes)} {selects}"


def _open_ctes(k: int, index: int) -> list[str]:
    t = shard_tables(index)
    welcomes = unnest(_WELCOME_TYPES, WELCOME_COLUMNS, 1 + k * len(WELCOME_COLUMNS))
    return [
        f"x{k} AS (SELECT x.* FROM {welcomes})",  # noqa: S608
        f"a{k} AS (INSERT INTO {t.quota_account.name} AS q "  # noqa: S608
        "(user_id, activity_id, total, total_left, day, month) "
        f"SELECT x.user_id, x.activity_id, x.total, x.total - 1, x.day, x.month FROM x{k} AS x "
        "ORDER BY x.user_id ON CONFLICT (user_id, activity_id) DO NOTHING "
        "RETURNING q.user_id, q.total, q.total_left, q.day, q.month)",
        f"d{k} AS ({_opened_period_sql(t.quota_day, 'day', 'on_day', k)})",
        f"m{k} AS ({_opened_period_sql(t.quota_month, 'month', 'in_month', k)})",
    ]


def _opened_period_sql(table: Table, period: str, key: str, k: int) -> str:
    # Rows of an account made by this statement: nobody else can have made one.
    left = f"{period}_left"
    return (
        f"INSERT INTO {table.name} AS q (user_id, activity_id, {period}, {left}) "  # noqa: S608
        f"SELECT x.user_id, x.activity_id, x.{key}, a.{period} - 1 "
        f"FROM a{k} AS a JOIN x{k} AS x ON x.user_id = a.user_id "
        f"RETURNING q.user_id, q.{left}"
    )


@cache
def wins_sql(tables: tuple[int, ...]) -> str:
    """The wins of orders (replays), an array of order ids per shard table in `tables`."""
    columns = ", ".join(WIN_READ_COLUMNS)
    return " UNION ALL ".join(
        f"SELECT {columns} FROM {shard_tables(index).award_record.name} "  # noqa: S608
        f"WHERE order_id = ANY(${k + 1}::varchar[])"
        for k, index in enumerate(tables)
    )


@cache
def give_back_sql(index: int) -> str:
    """One draw's chance back: its total, and its day and month where they were taken."""
    t = shard_tables(index)
    user = "user_id = $1 AND activity_id = $2"
    return (
        f"WITH a AS (UPDATE {t.quota_account.name} SET total_left = total_left + 1 "  # noqa: S608
        f"WHERE {user}), "
        f"d AS (UPDATE {t.quota_day.name} SET day_left = day_left + 1 "
        f"WHERE $5::boolean AND {user} AND day = $3) "
        f"UPDATE {t.quota_month.name} SET month_left = month_left + 1 "
        f"WHERE $6::boolean AND {user} AND month = $4"
    )


@cache
def record_sql(tables: tuple[int, ...]) -> str:
    """The orders, wins and outbox messages, per shard table in `tables`."""
    return chained(record_parts(tables))


def record_parts(tables: tuple[int, ...]) -> list[str]:
    """record_sql's statements, its parameters numbered from $1 (three arrays of rows per
    table: its orders, wins and outbox messages), for a statement that chains more after
    them."""
    inserts, first = [], 1
    for index in tables:
        t = shard_tables(index)
        for table, row, columns in (
            (t.raffle_order, ORDER_COLUMNS, ORDER_COLUMNS),
            (t.award_record, WIN_READ_COLUMNS, WIN_COLUMNS),  # no delivery error yet
            (t.outbox, OUTBOX_COLUMNS, OUTBOX_COLUMNS),
        ):
            inserts.append(inserted(table, row, columns, first))
            first += 1
    return inserts


def record_width(tables: tuple[int, ...]) -> int:
    """How many parameters record_parts takes."""
    return len(tables) * 3


def inserted(table: Table, row: Sequence[str], columns: Sequence[str], first: int) -> str:
    """An INSERT of `columns` of `table` from the rows of one array parameter `$first` of
    the table's own row type: each row a tuple of all its columns (`row`, the table's order).

    One array of rows rather than an array per column: the driver checks each element of
    an array (whether it is an array itself), and a row is one element where its columns
    were one each."""
    if tuple(table.c.keys()) != tuple(row):
        raise ValueError(f"{table.name}'s columns are not {row}")
    values = ", ".join(f"x.{name}" for name in columns)
    return (
        f"INSERT INTO {table.name} ({', '.join(columns)}) "  # noqa: S608
        f"SELECT {values} FROM {rows_of(table.name, first)}"
    )


def rows_of(kind: str, parameter: int) -> str:
    """The rows of array parameter `$parameter` of row type `kind`: `x(its columns)`,
    through a subquery the planner keeps (OFFSET 0), as `unnest`'s arrays."""
    return f"(SELECT ${parameter}::{kind}[] OFFSET 0) AS p(a0), unnest(p.a0) AS x"


@cache
def announce_sql(tables: tuple[int, ...]) -> str:
    """Outbox messages added to each shard table in `tables` (an array of rows each)."""
    return chained(
        [
            inserted(shard_tables(index).outbox, OUTBOX_COLUMNS, OUTBOX_COLUMNS, k + 1)
            for k, index in enumerate(tables)
        ]
    )
