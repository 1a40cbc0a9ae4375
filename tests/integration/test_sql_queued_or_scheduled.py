"""Migration 0032 on every backend: a scheduled activity stored as queued before the rule
(queued or scheduled, not both) is stored unqueued and reads again; the others keep theirs."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlalchemy import Boolean, column, insert, table

from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.tables.types import UtcDateTime
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from tests.integration.conftest import SHARD_TABLES

BEGIN, END = datetime(2026, 12, 1, tzinfo=UTC), datetime(2026, 12, 2, tzinfo=UTC)
SCHEDULE = json.dumps(
    {
        "draw_at": "2026-12-01T12:00:00+00:00",
        "cutoff": "2026-12-01T11:30:00+00:00",
        "winners": 3,
        "per_person": 1,
        "audience": None,
    }
)
# id -> (queued, schedule) as 0031 could store them
BEFORE = {1: (True, SCHEDULE), 2: (True, None), 3: (False, SCHEDULE), 4: (False, None)}
AFTER = {1: (False, True), 2: (True, False), 3: (False, True), 4: (False, False)}


async def test_migration_0032_unqueues_the_scheduled_activities_stored_queued(
    database_url: str,
) -> None:
    await upgrade(database_url, "0031", shard_tables=SHARD_TABLES)
    names = ("activity_id", "name", "description", "strategy_id", "time_zone", "state", "schedule")
    times = (column("begin_at", UtcDateTime), column("end_at", UtcDateTime))
    activity = table("activity", *map(column, names), *times, column("queued", Boolean))
    rows = [
        {
            "activity_id": i,
            "name": f"a{i}",
            "description": "",
            "strategy_id": 1,
            "begin_at": BEGIN,
            "end_at": END,
            "time_zone": "UTC",
            "state": "edit",
            "queued": queued,
            "schedule": schedule,
        }
        for i, (queued, schedule) in BEFORE.items()
    ]
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(insert(activity), rows)
        await upgrade(database_url, shard_tables=SHARD_TABLES)
        async with SqlUnitOfWork(engine) as uow:
            stored = await uow.activities.all()  # each row read into the domain
    finally:
        await engine.dispose()
    assert {a.id: (a.queued, a.schedule is not None) for a in stored} == AFTER
