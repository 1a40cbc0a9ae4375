"""The statements of a batch's participation steps on MariaDB (mariadb/draw_batch): multi-row,
one per shard table, with %s placeholders (asyncmy's).

Only our own table and column names are put into the SQL; every value is a bind parameter,
hence the `noqa: S608`s.
"""

from __future__ import annotations

from functools import cache

from raffle.adapters.sql.mariadb.draw_batch_sql import derived
from raffle.adapters.sql.tables.participation import participation_table
from raffle.adapters.sql.tables.points import points_tables


@cache
def counters_sql(index: int, count: int) -> str:
    """`count` counters (rows of position, user, activity, counter) on shard table `index`:
    those that have a row, with its joins and wins. A plain read: the accounts' row locks make one
    user's draws in an activity take turns, and READ COMMITTED reads what they committed."""
    table = participation_table(index).name
    rows = derived(("n", "user_id", "activity_id", "counter"), count)
    return (
        f"SELECT x.n, x.counter, c.n, c.wins FROM {rows} AS x JOIN {table} AS c "  # noqa: S608
        "ON c.user_id = x.user_id AND c.activity_id = x.activity_id AND c.counter = x.counter"
    )


@cache
def balances_sql(index: int, count: int) -> str:
    """`count` draws' points available (rows of position, user) on shard table `index`, their
    accounts locked in the order given (by user)."""
    table = points_tables(index).points_account.name
    rows = derived(("n", "user_id"), count)
    return (
        f"SELECT STRAIGHT_JOIN x.n, q.available FROM {rows} AS x "  # noqa: S608
        f"JOIN {table} AS q ON q.user_id = x.user_id FOR UPDATE"
    )


@cache
def add_sql(index: int, count: int) -> str:
    """`count` counter rows (rows of user, activity, counter, joins, wins) of shard table
    `index` added to (made with them)."""
    table = participation_table(index).name
    rows = ", ".join(["(%s, %s, %s, %s, %s)"] * count)
    return (
        f"INSERT INTO {table} (user_id, activity_id, counter, n, wins) "  # noqa: S608
        f"VALUES {rows} ON DUPLICATE KEY UPDATE n = n + VALUES(n), wins = wins + VALUES(wins)"
    )


@cache
def debit_sql(index: int) -> tuple[str, str]:
    """A draw's points: its spend order, and the amount taken from the account (locked by
    balances_sql, its balance checked: the guard never refuses)."""
    t = points_tables(index)
    return (
        f"INSERT INTO {t.points_order.name} "  # noqa: S608
        "(order_id, user_id, kind, amount, out_business_no, reason, created_at) "
        "VALUES (%s, %s, 'spend', %s, %s, %s, %s)",
        f"UPDATE {t.points_account.name} SET available = available - %s "  # noqa: S608
        "WHERE user_id = %s AND available >= %s",
    )
