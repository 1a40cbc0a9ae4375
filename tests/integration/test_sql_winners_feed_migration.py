"""Migration 0024 on every backend: the activities' `show_winning_list` and the award
records' index by (activity_id, order_id) come, and go again on a downgrade to 0021."""

from __future__ import annotations

from sqlalchemy import inspect
from sqlalchemy.engine import Connection

from raffle.adapters.sql.migrate import downgrade, upgrade
from raffle.adapters.sql.unit_of_work import create_engine
from tests.integration.conftest import SHARD_TABLES

BY_ACTIVITY = ["activity_id", "order_id"]


async def _feed_schema(url: str) -> tuple[bool, list[bool]]:
    """Whether the activity has the column, and per award record table whether the index is."""

    def found(connection: Connection) -> tuple[bool, list[bool]]:
        tables = inspect(connection)
        column = any(c["name"] == "show_winning_list" for c in tables.get_columns("activity"))
        indexed = [
            any(
                i["column_names"] == BY_ACTIVITY
                for i in tables.get_indexes(f"award_record_{n:03d}")
            )
            for n in range(SHARD_TABLES)
        ]
        return column, indexed

    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(found)
    finally:
        await engine.dispose()


async def test_migration_0024_adds_the_feed_setting_and_index_and_its_downgrade_removes_them(
    database_url: str,
) -> None:
    await upgrade(database_url, shard_tables=SHARD_TABLES)
    assert await _feed_schema(database_url) == (True, [True] * SHARD_TABLES)
    await downgrade(database_url, "0023", shard_tables=SHARD_TABLES)
    assert await _feed_schema(database_url) == (False, [False] * SHARD_TABLES)
    await upgrade(database_url, shard_tables=SHARD_TABLES)
    assert await _feed_schema(database_url) == (True, [True] * SHARD_TABLES)
