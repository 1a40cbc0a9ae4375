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

# A counter of one draw: its position, user, activity and counter's name.
COUNTER_COLUMNS = ("n", "user_id", "activity_id", "counter")
_COUNTER_TYPES = ("int", "varchar", "bigint", "varchar")
BALANCE_COLUMNS = ("n", "user_id")  # a draw whose points account is read and locked
_BALANCE_TYPES = ("int", "varchar")
DEBIT_COLUMNS = ("order_id", "user_id", "amount", "out_business_no", "reason", "created_at")
_DEBIT_TYPES = ("varchar", "varchar", "bigint", "varchar", "varchar", "timestamp")
ADD_COLUMNS = COUNTER_COLUMNS[1:]
_ADD_TYPES = _COUNTER_TYPES[1:]


@cache
def standings_sql(tables: tuple[int, ...]) -> str:
    """Per shard table in `tables`: the counters asked for that have a row (`n`, `counter`,
    `count`), and the points available of the draws asked for (`n`, NULL, `available`),
    their accounts locked in the order of the arrays (by user).

    A statement of its own, after consume_sql: its snapshot is taken once consume_sql holds
    the quota accounts' locks, so it reads the counters of every draw committed before
    (consume_sql's own snapshot predates its wait for those locks)."""
    ctes, selects, first = [], [], 1
    for k, index in enumerate(tables):
        counters, accounts = participation_table(index).name, points_tables(index).points_account
        wanted = unnest(_COUNTER_TYPES, COUNTER_COLUMNS, first)
        users = unnest(_BALANCE_TYPES, BALANCE_COLUMNS, first + len(COUNTER_COLUMNS))
        first += len(COUNTER_COLUMNS) + len(BALANCE_COLUMNS)
        ctes.append(
            f"b{k} AS (SELECT x.n, q.available FROM {users}, LATERAL "  # noqa: S608
            f"(SELECT user_id, available FROM {accounts.name} AS q "
            "WHERE q.user_id = x.user_id LIMIT 1) AS q FOR UPDATE OF q)"
        )
        selects.append(
            f"SELECT x.n, x.counter, c.count FROM {wanted}, LATERAL "  # noqa: S608
            f"(SELECT c.n AS count FROM {counters} AS c WHERE c.user_id = x.user_id "
            "AND c.activity_id = x.activity_id AND c.counter = x.counter LIMIT 1) AS c "
            f"UNION ALL SELECT b.n, NULL, b.available FROM b{k} AS b"
        )
    return f"WITH {', '.join(ctes)} {' UNION ALL '.join(selects)}"


@cache
def record_and_count_sql(recorded: tuple[int, ...], counted: tuple[int, ...]) -> str:
    """record_sql's statements for the shard tables `recorded`, then the counts of
    `counted` (count_parts), as one statement: a batch's counts cost no round trip of their
    own."""
    return chained([*record_parts(recorded), *count_parts(counted, 1 + record_width(recorded))])


def count_parts(tables: tuple[int, ...], first: int) -> list[str]:
    """Per shard table in `tables`: one more on each counter (a row made at 1), and each
    debit's points order written and its amount taken from the account (whose balance the
    batch read and locked: the guard never refuses); parameters numbered from `first`."""
    parts = []
    for index in tables:
        counters, points = participation_table(index).name, points_tables(index)
        added = unnest(_ADD_TYPES, ADD_COLUMNS, first)
        debits = unnest(_DEBIT_TYPES, DEBIT_COLUMNS, first + len(ADD_COLUMNS))
        first += len(ADD_COLUMNS) + len(DEBIT_COLUMNS)
        parts += [
            f"INSERT INTO {counters} AS q (user_id, activity_id, counter, n) "  # noqa: S608
            f"SELECT x.user_id, x.activity_id, x.counter, 1 FROM {added} "
            "ORDER BY x.user_id, x.counter ON CONFLICT (user_id, activity_id, counter) "
            "DO UPDATE SET n = q.n + 1",
            f"INSERT INTO {points.points_order.name} "  # noqa: S608
            f"(order_id, user_id, kind, amount, out_business_no, reason, created_at) "
            f"SELECT x.order_id, x.user_id, 'spend', x.amount, x.out_business_no, x.reason, "
            f"x.created_at FROM {debits}",
            f"UPDATE {points.points_account.name} AS q "  # noqa: S608
            f"SET available = q.available - x.amount FROM {debits} "
            "WHERE q.user_id = x.user_id AND q.available >= x.amount",
        ]
    return parts
