"""Migration 0008 on every backend: the award records' index by user goes, and comes back
on a downgrade to 0007."""

from __future__ import annotations

from sqlalchemy import inspect
from sqlalchemy.engine import Connection

from raffle.adapters.sql.migrate import downgrade, upgrade
from raffle.adapters.sql.unit_of_work import create_engine
from tests.integration.conftest import SHARD_TABLES

BY_USER = ["user_id", "activity_id", "order_id"]


async def _indexed_by_user(url: str) -> list[bool]:
    """Per award record table, whether an index by (user_id, activity_id, order_id) is there."""

    def found(connection: Connection) -> list[bool]:
        tables = inspect(connection)
        return [
            any(i["column_names"] == BY_USER for i in tables.get_indexes(f"award_record_{n:03d}"))
            for n in range(SHARD_TABLES)
        ]

    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(found)
    finally:
        await engine.dispose()


async def test_migration_0008_drops_the_wins_by_user_index_and_0007_has_it(
    database_url: str,
) -> None:
    await upgrade(database_url, shard_tables=SHARD_TABLES)
    assert await _indexed_by_user(database_url) == [False] * SHARD_TABLES
    await downgrade(database_url, "0007", shard_tables=SHARD_TABLES)
    assert await _indexed_by_user(database_url) == [True] * SHARD_TABLES
    await upgrade(database_url, shard_tables=SHARD_TABLES)
    assert await _indexed_by_user(database_url) == [False] * SHARD_TABLES
