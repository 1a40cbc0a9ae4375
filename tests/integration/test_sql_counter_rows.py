"""Migration 0031 on every backend: a policy's joins and wins counters of one period become
one row (its joins and its wins), the caps' wins and the prizes' marks count in `wins`; the
downgrade to 0030 names them back as they were."""

from __future__ import annotations

from typing import Any

from sqlalchemy import column, insert, select, table

from raffle.adapters.sql.migrate import downgrade, upgrade
from raffle.adapters.sql.unit_of_work import create_engine
from tests.integration.conftest import SHARD_TABLES

# As 0030 counted them: (user, counter, n), in shard table 001.
BEFORE = {
    ("ann", "p1:joins:2026-W48", 3),
    ("ann", "p1:wins:2026-W48", 1),  # one row with the joins above
    ("ann", "p2:wins:2026-11-24", 2),  # wins only: a row of its own
    ("ann", "p2:joins:all", 5),  # another period than its wins
    ("bob", "cap:wins:2026-11", 4),
    ("bob", "won:7", 1),
}
AFTER = {
    ("ann", "p1:2026-W48", 3, 1),
    ("ann", "p2:2026-11-24", 0, 2),
    ("ann", "p2:all", 5, 0),
    ("bob", "cap:2026-11", 0, 4),
    ("bob", "won:7", 0, 1),
}
ACTIVITY = 9


def _counters(wins: bool) -> Any:
    names = ["user_id", "activity_id", "counter", "n", *(["wins"] if wins else [])]
    return table("participation_001", *(column(n) for n in names))


async def _rows(url: str, wins: bool) -> set[tuple[Any, ...]]:
    t = _counters(wins)
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            found = await connection.execute(
                select(t.c.user_id, t.c.counter, t.c.n, *([t.c.wins] if wins else []))
            )
            return {tuple(row) for row in found}
    finally:
        await engine.dispose()


async def test_migration_0031_joins_a_policys_counters_of_a_period_and_goes_back(
    database_url: str,
) -> None:
    await upgrade(database_url, "0030", shard_tables=SHARD_TABLES)
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            rows = [{"user_id": u, "activity_id": ACTIVITY, "counter": c, "n": n}
                    for u, c, n in BEFORE]  # fmt: skip
            await connection.execute(insert(_counters(wins=False)), rows)
    finally:
        await engine.dispose()

    await upgrade(database_url, shard_tables=SHARD_TABLES)
    assert await _rows(database_url, wins=True) == AFTER

    await downgrade(database_url, "0030", shard_tables=SHARD_TABLES)
    assert await _rows(database_url, wins=False) == BEFORE
