"""The statements of mariadb/draw_batch: multi-row, one per shard table and step of a batch,
with %s placeholders (asyncmy's).

Only our own table and column names are put into the SQL; every value is a bind parameter,
hence the `noqa: S608`s. A statement's text depends on its number of rows: MariaDB parses
each statement anyway (asyncmy sends them as text).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from sqlalchemy import Table

from raffle.adapters.sql.tables.draw_rows import (
    ORDER_COLUMNS,
    OUTBOX_COLUMNS,
    WIN_COLUMNS,
    WIN_READ_COLUMNS,
)
from raffle.adapters.sql.tables.shard import shard_tables

CLAIM_COLUMNS = ("n", "user_id", "activity_id", "on_day", "in_month", "request_key")
# A row of consume_sql: the claim's position, its account (all NULL if none), the day and
# month rows' chances left (NULL if none yet), then the order of its Idempotency-Key.
CHANCE_COLUMNS = ("n", "total", "total_left", "day", "month", "day_left", "month_left")
REPLAY_AT = len(CHANCE_COLUMNS)
ACCOUNT_COLUMNS = ("user_id", "activity_id", "total", "total_left", "day", "month")


def _rows(width: int, count: int) -> str:
    row = f"({', '.join(['%s'] * width)})"
    return ", ".join([row] * count)


def derived(columns: Sequence[str], count: int) -> str:
    """A derived table of `count` rows of `columns`, every value a parameter."""
    first = ", ".join(f"%s AS {name}" for name in columns)
    more = " UNION ALL SELECT " + ", ".join(["%s"] * len(columns))
    return f"(SELECT {first}{more * (count - 1)})"


@cache
def consume_sql(index: int, count: int) -> str:
    """`count` claims on shard table `index` (a derived table of their rows, `x`), each with
    its account, day and month rows locked, and the order recorded with its
    Idempotency-Key. STRAIGHT_JOIN keeps the join order as written: the claims in the order
    given, and each one's account locked before its day and month rows, as every draw does."""
    t = shard_tables(index)
    key = "{0}.user_id = x.user_id AND {0}.activity_id = x.activity_id"
    replay = ", ".join(f"o.{name}" for name in ORDER_COLUMNS)
    return (
        "SELECT STRAIGHT_JOIN x.n, q.total, q.total_left, q.day, q.month, "  # noqa: S608
        f"d.day_left, m.month_left, {replay} FROM {derived(CLAIM_COLUMNS, count)} AS x "
        f"LEFT JOIN {t.quota_account.name} AS q ON {key.format('q')} "
        f"LEFT JOIN {t.quota_day.name} AS d ON {key.format('d')} AND d.day = x.on_day "
        f"LEFT JOIN {t.quota_month.name} AS m ON {key.format('m')} AND m.month = x.in_month "
        f"LEFT JOIN {t.raffle_order.name} AS o "
        "ON o.user_id = x.user_id AND o.request_key = x.request_key "
        "FOR UPDATE"
    )


@cache
def open_sql(index: int, count: int) -> str:
    """`count` accounts opened on shard table `index`, unless one exists (opened by another
    transaction meanwhile: left as it is); the keys of those opened.

    IGNORE takes a shared lock on an account that exists: this transaction never writes
    that account, so it never needs the lock upgraded (which deadlocked first visits)."""
    name = shard_tables(index).quota_account.name
    return (
        f"INSERT IGNORE INTO {name} ({', '.join(ACCOUNT_COLUMNS)}) "  # noqa: S608
        f"VALUES {_rows(len(ACCOUNT_COLUMNS), count)} RETURNING user_id"
    )


@cache
def take_sql(index: int, count: int) -> tuple[str, str, str]:
    """`count` chances taken on shard table `index`: from the accounts' totals (rows of
    their keys), and from their day and month rows (rows of the key and what the row holds
    after the chance, if this is its first draw: it is made then)."""
    t = shard_tables(index)
    accounts = (
        f"UPDATE {t.quota_account.name} SET total_left = total_left - 1 "  # noqa: S608
        f"WHERE (user_id, activity_id) IN ({_rows(2, count)})"
    )

    def period(table: Table, period: str) -> str:
        return (
            f"INSERT INTO {table.name} (user_id, activity_id, {period}, {period}_left) "  # noqa: S608
            f"VALUES {_rows(4, count)} "
            f"ON DUPLICATE KEY UPDATE {period}_left = {period}_left - 1"
        )

    return accounts, period(t.quota_day, "day"), period(t.quota_month, "month")


@cache
def record_sql(index: int, count: int) -> tuple[str, str, str]:
    """`count` draws' orders, wins and outbox messages on shard table `index`."""
    t = shard_tables(index)

    def insert(table: Table, columns: tuple[str, ...]) -> str:
        return (
            f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES {_rows(len(columns), count)}"  # noqa: S608
        )

    return (
        insert(t.raffle_order, ORDER_COLUMNS),
        insert(t.award_record, WIN_COLUMNS),
        insert(t.outbox, OUTBOX_COLUMNS),
    )


@cache
def wins_sql(index: int, count: int) -> str:
    """The wins of `count` orders (replays) on shard table `index`."""
    table = shard_tables(index).award_record
    marks = ", ".join(["%s"] * count)
    return (
        f"SELECT {', '.join(WIN_READ_COLUMNS)} FROM {table.name} "  # noqa: S608
        f"WHERE order_id IN ({marks})"
    )


@cache
def announce_sql(index: int, count: int) -> str:
    """`count` outbox messages on shard table `index`."""
    outbox = shard_tables(index).outbox
    return (
        f"INSERT INTO {outbox.name} ({', '.join(OUTBOX_COLUMNS)}) "  # noqa: S608
        f"VALUES {_rows(len(OUTBOX_COLUMNS), count)}"
    )
