"""The statements of draws in batches (and of stock claims) on PostgreSQL settle on a generic
plan: planned once per connection, not at every execution. Seeing its arrays' lengths, the
planner found every custom plan cheaper than the generic one, and planning was ~40% of
PostgreSQL's CPU under load."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.postgres.draw_batch_sql import (
    CLAIM_COLUMNS,
    consume_sql,
    open_sql,
    record_sql,
)
from raffle.adapters.sql.postgres.participation_sql import (
    record_and_count_sql,
    standings_sql,
)
from raffle.adapters.sql.stock_claims import PRIZES, _pg_claims
from raffle.adapters.sql.tables.shard import shard_tables
from raffle.adapters.sql.unit_of_work import create_engine

TABLES = (1, 3)  # a batch's shard tables, of 4
RUNS = 8  # the plan cache tries five custom plans first
AT = datetime(2026, 11, 22, 9, 0)


def _claims(size: int, run: int) -> list[list[Any]]:
    """Consume's arrays of rows: `size` claims in each table (no account: nothing is taken)."""
    users = [f"user{run}-{n}" for n in range(size)]
    rows = [(user, 1, "2026-11-22", "2026-11", user, n) for n, user in enumerate(users)]
    return [rows] * len(TABLES)


def _welcomes(size: int, run: int) -> list[list[Any]]:
    """Open's arrays: `size` first visits in each table, their accounts opened (then rolled
    back)."""
    users = [f"user{run}-{n}" for n in range(size)]
    days, months, counts = ["2026-11-22"] * size, ["2026-11"] * size, [20] * size
    rows = [users, [1] * size, days, months, counts, counts, counts, list(range(size))]
    return rows * len(TABLES)


def _records(size: int, run: int) -> list[list[Any]]:
    """Record's arrays of rows: `size` orders, wins and outbox messages in each table."""
    ids = [f"{run:04d}{n:028d}" for n in range(size)]
    order = [(i, i, 1, 2, 1, "ok", i, AT, 7, None) for i in ids]
    win = [(i, i, 1, 2, 3, None, "r", "create", AT, None, None) for i in ids]
    outbox = [(i, "t", i, "{}", "create", 0, AT, AT) for i in ids]
    return [order, win, outbox] * len(TABLES)


def _standings(size: int, run: int) -> list[list[Any]]:
    """Participation's reads: two counter rows per draw (a policy's, the caps'), and each
    draw's points account."""
    users = [f"user{run}-{n}" for n in range(size)]
    counters = [[n for n in range(size) for _ in "pc"], [u for u in users for _ in "pc"],
                [1] * 2 * size, ["p1:all", "cap:all"] * size]  # fmt: skip
    return [*counters, list(range(size)), users] * len(TABLES)


def _counters(size: int, run: int) -> list[list[Any]]:
    """Participation's reads of a batch whose policies cost no points: counter rows alone."""
    users = [f"user{run}-{n}" for n in range(size)]
    return [list(range(size)), users, [1] * size, ["p1:all"] * size] * len(TABLES)


def _counts(size: int, run: int) -> list[list[Any]]:
    """Participation's writes: a counter row and a debit per draw (then rolled back)."""
    users, ids = (
        [f"user{run}-{n}" for n in range(size)],
        [f"{run:04d}{n:020d}" for n in range(size)],
    )
    added = [users, [1] * size, ["p1:all"] * size, [1] * size, [0] * size]
    debits = [ids, users, [3] * size, ids, ["draw"] * size, [AT] * size]
    return (added + debits) * len(TABLES)


def _records_and_counts(size: int, run: int) -> list[list[Any]]:
    return _records(size, run) + _counts(size, run)


def _records_and_counters(size: int, run: int) -> list[list[Any]]:
    """The records and the counter rows of a batch that debits no points."""
    users = [f"user{run}-{n}" for n in range(size)]
    added = [users, [1] * size, ["p1:all"] * size, [1] * size, [0] * size]
    return _records(size, run) + added * len(TABLES)


def _slots(size: int, run: int) -> list[list[Any]]:
    return [[1] * size, [run] * size, list(range(1, size + 1)), ["o"] * size, [AT] * size]


async def test_batch_statements_run_a_generic_plan_whatever_the_batch_size(
    make_database_url: Callable[[str], Awaitable[str]],
) -> None:
    url = await make_database_url("postgres")
    await upgrade(url, shard_tables=4)
    engine = create_engine(url)
    statements = {
        consume_sql(TABLES): _claims,
        open_sql(TABLES): _welcomes,
        record_sql(TABLES): _records,
        standings_sql(TABLES, True, True): _standings,
        standings_sql(TABLES, True, False): _counters,
        record_and_count_sql(TABLES, TABLES, True, True): _records_and_counts,
        record_and_count_sql(TABLES, TABLES, True, False): _records_and_counters,
        _pg_claims(PRIZES): _slots,
    }
    try:
        async with engine.connect() as connection:
            raw: Any = (await connection.get_raw_connection()).driver_connection
            for run in range(RUNS):
                for sql, arrays in statements.items():
                    transaction = raw.transaction()
                    await transaction.start()
                    await raw.fetch(sql, *arrays(1 + run % 3, run))  # batches of 1 to 3
                    await transaction.rollback()
            plans = await raw.fetch(
                "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
            )
    finally:
        await engine.dispose()
    found = {row["statement"]: (row["generic_plans"], row["custom_plans"]) for row in plans}
    assert [found[sql] for sql in statements] == [(RUNS - 5, 5)] * len(statements)


async def test_rows_sent_whole_are_in_the_migrated_tables_column_order(
    make_database_url: Callable[[str], Awaitable[str]],
) -> None:
    """The record's rows go as the tables' own row types, by position, and consume's as
    `draw_claim`s: the migrated tables hold their columns in the order of their
    definitions, and the type those of a claim."""
    url = await make_database_url("postgres")
    await upgrade(url, shard_tables=4)
    engine = create_engine(url)
    t = shard_tables(3)
    tables = [t.raffle_order, t.award_record, t.outbox]
    names = [*(table.name for table in tables), "draw_claim"]  # and consume's row type
    try:
        async with engine.connect() as connection:
            raw: Any = (await connection.get_raw_connection()).driver_connection
            found = [
                [
                    row["attname"]
                    for row in await raw.fetch(
                        "SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass "
                        "AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
                        name,
                    )
                ]
                for name in names
            ]
    finally:
        await engine.dispose()
    assert found == [*(list(table.c.keys()) for table in tables), list(CLAIM_COLUMNS)]
