"""Why a delivery failed, on every backend: the last attempt's error kept on the award
record (cut to the column), kept when the record is marked failed, cleared when it
completes; and migration 0006 that adds the columns to every award record table."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import inspect
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.migrate import downgrade, upgrade
from raffle.adapters.sql.shards import SqlShards
from raffle.adapters.sql.tables.shard import ERROR_MESSAGE_LENGTH
from raffle.adapters.sql.unit_of_work import create_engine
from raffle.domain.draws import DeliveryError, OutboxMessage, Win, WinState
from raffle.domain.errors import RaffleError
from raffle.service.delivery import failed_deliveries, give_up, note_failure, won_message
from tests.integration.conftest import SHARD_TABLES

T0 = datetime(2026, 11, 22, 4, 0, 0, tzinfo=UTC)


class PoolEmpty(RaffleError):
    code = "code_pool_empty"


async def _won(shards: SqlShards, n: int) -> tuple[Win, OutboxMessage]:
    win = Win(f"{n:024d}", f"user{n:03d}", 1, 10, 101, None, "default", T0)
    async with shards.for_user(win.user_id) as uow:
        await uow.wins.add(win)
        await uow.commit()
    return win, won_message(win, T0)


async def _get(shards: SqlShards, win: Win) -> Win:
    async with shards.for_user(win.user_id) as uow:
        found = await uow.wins.get(win.order_id)
    assert found is not None
    return found


async def test_the_last_error_is_kept_until_the_delivery_completes(engine: AsyncEngine) -> None:
    shards = SqlShards([engine], tables=SHARD_TABLES)
    (pooled, first), (other, second) = await _won(shards, 1), await _won(shards, 2)
    await note_failure(first, LookupError("x" * 500), shards)
    assert (await _get(shards, pooled)).error == DeliveryError(
        "internal", ("LookupError: " + "x" * 500)[:ERROR_MESSAGE_LENGTH]
    )
    await note_failure(first, PoolEmpty("pool 'five-off' has no free code"), shards)
    why = DeliveryError("code_pool_empty", "pool 'five-off' has no free code")
    assert await give_up(first, shards) is True  # the dead-letter step: no reason handed
    assert [w.error for w in await failed_deliveries(shards)] == [why]
    await note_failure(first, LookupError("late"), shards)  # failed already: kept as it was
    assert (await _get(shards, pooled)).error == why

    await note_failure(second, LookupError("once"), shards)
    async with shards.for_user(other.user_id) as uow:
        assert await uow.wins.settle_many([other.order_id], WinState.CREATE, WinState.COMPLETED)
        await uow.commit()
    assert (await _get(shards, other)).error is None


async def test_migration_0006_goes_down_to_0005_and_up_again(database_url: str) -> None:
    def columns(connection: Connection) -> list[set[str]]:
        found = inspect(connection)
        return [
            {c["name"] for c in found.get_columns(f"award_record_{n:03d}")}
            for n in range(SHARD_TABLES)
        ]

    async def error_columns() -> list[set[str]]:
        engine = create_engine(database_url)
        try:
            async with engine.connect() as connection:
                found = await connection.run_sync(columns)
        finally:
            await engine.dispose()
        return [names & {"error_code", "error_message"} for names in found]

    await upgrade(database_url, shard_tables=SHARD_TABLES)
    assert await error_columns() == [{"error_code", "error_message"}] * SHARD_TABLES
    await downgrade(database_url, "0005", shard_tables=SHARD_TABLES)
    assert await error_columns() == [set()] * SHARD_TABLES
    await upgrade(database_url, shard_tables=SHARD_TABLES)
    assert await error_columns() == [{"error_code", "error_message"}] * SHARD_TABLES
