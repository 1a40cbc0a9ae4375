"""The connections of MariaDB's draw batches (mariadb/lane): kept between batches, replaced when
lost, closed with the lanes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.mariadb.lane import LaneConnections, LaneTransaction
from raffle.adapters.sql.unit_of_work import create_engine


@pytest.fixture
async def engine(make_database_url: Callable[[str], Awaitable[str]]) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(await make_database_url("mariadb"))
    async with engine.begin() as connection:
        await connection.execute(text("CREATE TABLE t (k INT PRIMARY KEY)"))
    yield engine
    await engine.dispose()


async def connection_id(lane: LaneConnections, key: int) -> int:
    """The id of the connection a transaction on the lane ran on: it inserts row `key` and
    commits (a key that exists breaks the primary key: the transaction rolls back)."""
    async with LaneTransaction(lane) as tx:
        ((found,),) = (await tx.send([("SELECT connection_id()", ())]))[0]
        await tx.finish([("INSERT INTO t VALUES (%s)", (key,))])
    return int(found)


async def rows(engine: AsyncEngine) -> int:
    async with engine.connect() as connection:
        return int(await connection.scalar(text("SELECT count(*) FROM t")) or 0)


async def alive(engine: AsyncEngine, connection: int) -> bool:
    query = "SELECT count(*) FROM information_schema.processlist WHERE id = :id"
    async with engine.connect() as c:
        return bool(await c.scalar(text(query), {"id": connection}))


async def test_a_lane_keeps_its_connection_between_transactions_failed_ones_too(
    engine: AsyncEngine,
) -> None:
    lane = LaneConnections(engine)
    async with engine.begin() as connection:
        await connection.execute(text("INSERT INTO t VALUES (0)"))

    first = await connection_id(lane, 1)
    with pytest.raises(Exception, match="Duplicate entry"):
        await connection_id(lane, 0)
    again = await connection_id(lane, 2)

    assert again == first
    assert await rows(engine) == 3  # 0, 1 and 2: the failed one rolled back
    await lane.close()


async def test_a_lost_connection_is_replaced_and_closing_closes_the_idle_ones(
    engine: AsyncEngine,
) -> None:
    lane = LaneConnections(engine)
    lost = await connection_id(lane, 1)
    async with engine.connect() as connection:
        await connection.execute(text(f"KILL {lost}"))

    with pytest.raises(Exception, match=r"Lost connection|server has gone away"):
        await connection_id(lane, 2)  # found closed by the transaction that uses it
    fresh = await connection_id(lane, 3)

    assert fresh != lost
    assert await alive(engine, fresh)
    await lane.close()
    async with asyncio.timeout(10):
        while await alive(engine, fresh):  # noqa: ASYNC110 - the server has no event to wait on
            await asyncio.sleep(0.01)
