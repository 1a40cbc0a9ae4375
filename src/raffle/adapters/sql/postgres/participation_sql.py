"""The statements of a batch's participation steps on PostgreSQL (postgres/draw_batch): one
to read the draws' counters and lock their points accounts; the counts and debits go with
the batch's records, in its statement.

Only our own table and column names are put into the SQL; every value is a bind parameter,
hence the `noqa: S608`s.
"""

from __future__ import annotations

from functools import cache

from raffle.adapters.sql.postgres.draw_batch_sql import (
    chained,
    record_parts,
    record_width,
    unnest,
)
from raffle.adapters.sql.tables.participation import participation_table
from raffle.adapters.sql.tables.points import points_tables

# A counter row of one draw: its position, user, activity and counter's name.
COUNTER_COLUMNS = ("n", "user_id", "activity_id", "counter")
_COUNTER_TYPES = ("int", "varchar", "bigint", "varchar")
BALANCE_COLUMNS = ("n", "user_id")  # a draw whose points account is read and locked
_BALANCE_TYPES = ("int", "varchar")
DEBIT_COLUMNS = ("order_id", "user_id", "amount", "out_business_no", "reason", "created_at")
_DEBIT_TYPES = ("varchar", "varchar", "bigint", "varchar", "varchar", "timestamp")
# What a draw adds to a counter row: its joins and its wins.
ADD_COLUMNS = (*COUNTER_COLUMNS[1:], "joins", "wins")
_ADD_TYPES = (*_COUNTER_TYPES[1:], "int", "int")


@cache
def standings_sql(tables: tuple[int, ...], counters: bool, balances: bool) -> str:
    """Per shard table in `tables`: if `counters`, the counter rows asked for that exist
    (`n`, `counter`, `count` its joins, `wins`); if `balances`, the points available of the
    draws asked for (`n`, NULL, `available`, NULL), their accounts locked in the order of the
    arrays (by user). A batch that reads no balance (no policy of its draws costs points)
    sends neither the accounts' arrays nor their lookups.

    A statement of its own, after consume_sql: its snapshot is taken once consume_sql holds
    the quota accounts' locks, so it reads the counters of every draw committed before
    (consume_sql's own snapshot predates its wait for those locks)."""
    if not (counters or balances):
        raise ValueError("a read of counters, balances or both")
    ctes, selects, first = [], [], 1
    for k, index in enumerate(tables):
        if counters:
            wanted = unnest(_COUNTER_TYPES, COUNTER_COLUMNS, first)
            first += len(COUNTER_COLUMNS)
            selects.append(
                f"SELECT x.n, x.counter, c.count, c.wins FROM {wanted}, LATERAL "  # noqa: S608
                "(SELECT c.n AS count, c.wins FROM "
                f"{participation_table(index).name} AS c WHERE c.user_id = x.user_id "
                "AND c.activity_id = x.activity_id AND c.counter = x.counter LIMIT 1) AS c"
            )
        if balances:
            users = unnest(_BALANCE_TYPES, BALANCE_COLUMNS, first)
            first += len(BALANCE_COLUMNS)
            ctes.append(
                f"b{k} AS (SELECT x.n, q.available FROM {users}, LATERAL "  # noqa: S608
                "(SELECT user_id, available FROM "
                f"{points_tables(index).points_account.name} AS q "
                "WHERE q.user_id = x.user_id LIMIT 1) AS q FOR UPDATE OF q)"
            )
            selects.append(f"SELECT b.n, NULL, b.available, NULL FROM b{k} AS b")  # noqa: S608
    read = " UNION ALL ".join(selects)
    return f"WITH {', '.join(ctes)} {read}" if ctes else read


@cache
def record_and_count_sql(
    recorded: tuple[int, ...], counted: tuple[int, ...], counters: bool, debits: bool
) -> str:
    """record_sql's statements for the shard tables `recorded`, then the counts of
    `counted` (count_parts), as one statement: a batch's counts cost no round trip of their
    own."""
    first = 1 + record_width(recorded)
    return chained([*record_parts(recorded), *count_parts(counted, first, counters, debits)])


def count_parts(tables: tuple[int, ...], first: int, counters: bool, debits: bool) -> list[str]:
    """Per shard table in `tables`: if `counters`, each counter row's joins and wins added
    to (a row made with them); if `debits`, each debit's points order written and its amount
    taken from the account (whose balance the batch read and locked: the guard never
    refuses). Parameters numbered from `first`: the counters' arrays, then the debits'."""
    parts = []
    for index in tables:
        points = points_tables(index)
        if counters:
            added = unnest(_ADD_TYPES, ADD_COLUMNS, first)
            first += len(ADD_COLUMNS)
            parts.append(
                f"INSERT INTO {participation_table(index).name} AS q "  # noqa: S608
                "(user_id, activity_id, counter, n, wins) "
                f"SELECT x.user_id, x.activity_id, x.counter, x.joins, x.wins FROM {added} "
                "ORDER BY x.user_id, x.counter ON CONFLICT (user_id, activity_id, counter) "
                "DO UPDATE SET n = q.n + excluded.n, wins = q.wins + excluded.wins"
            )
        if debits:
            spent = unnest(_DEBIT_TYPES, DEBIT_COLUMNS, first)
            first += len(DEBIT_COLUMNS)
            parts += [
                f"INSERT INTO {points.points_order.name} "  # noqa: S608
                f"(order_id, user_id, kind, amount, out_business_no, reason, created_at) "
                f"SELECT x.order_id, x.user_id, 'spend', x.amount, x.out_business_no, "
                f"x.reason, x.created_at FROM {spent}",
                f"UPDATE {points.points_account.name} AS q "  # noqa: S608
                f"SET available = q.available - x.amount FROM {spent} "
                "WHERE q.user_id = x.user_id AND q.available >= x.amount",
            ]
    return parts
