"""An activity's caps in storage (migration 0015): stored and read back, none on activities
from before it, and the migration undoes itself."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import sqlalchemy as sa

from raffle.adapters.sql.migrate import downgrade, upgrade
from raffle.adapters.sql.tables.config import NAMING_CONVENTION, define_activity
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.activity import Activity
from raffle.domain.caps import NO_CAPS, Caps

OLD = Activity(1, "old", 10, datetime(2026, 1, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC))


async def test_caps_are_stored_none_before_0015_and_the_migration_undoes_itself(
    database_url: str,
) -> None:
    await upgrade(database_url, "0014")
    before = define_activity(sa.MetaData(naming_convention=NAMING_CONVENTION), caps=False)
    engine = create_engine(database_url)
    try:
        row = {
            "activity_id": OLD.id, "name": OLD.name, "description": "", "strategy_id": 10,
            "begin_at": OLD.begin_at, "end_at": OLD.end_at, "time_zone": OLD.time_zone,
            "state": OLD.state.value, "welcome_pack": None,
        }  # fmt: skip
        async with engine.begin() as connection:  # the row as code before 0015 wrote it
            await connection.execute(sa.insert(before).values(row))
        await upgrade(database_url)
        capped = replace(OLD, id=2, caps=Caps(winners=50, participants=1000, perfect=True))
        async with SqlUnitOfWork(engine) as uow:
            await uow.activities.save(capped)
            await uow.commit()
        async with SqlUnitOfWork(engine) as uow:
            old, new = await uow.activities.get(1), await uow.activities.get(2)
    finally:
        await engine.dispose()
    assert old is not None
    assert old.caps == NO_CAPS
    assert new == capped
    await downgrade(database_url, "0014")  # and back down: 0015 undoes itself
    await upgrade(database_url)
