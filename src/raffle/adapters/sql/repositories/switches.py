"""Runtime switches in SQL: the switches set, a version row every change moves on, the audit."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.repositories.version_rows import version_of
from raffle.adapters.sql.tables.config import switch, switch_change, switch_version
from raffle.adapters.sql.transaction import SqlTransaction
from raffle.domain.switches import SwitchChange

_VERSION = version_of(switch_version)


class SqlSwitchStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def version(self) -> int:
        async with self._engine.connect() as connection:
            return int((await connection.execute(_VERSION)).scalar_one())

    async def load(self) -> tuple[int, Mapping[str, str]]:
        async with self._engine.connect() as connection:
            version = int((await connection.execute(_VERSION)).scalar_one())
            rows = await connection.execute(select(switch.c.name, switch.c.value))
            return version, {str(name): str(value) for name, value in rows}

    async def change(
        self, name: str, value: str, default: str, actor: str, at: datetime
    ) -> SwitchChange | None:
        tx = SqlTransaction(self._engine)
        connection = await tx.open()
        try:
            # First: the version row's lock makes changes take turns from here on.
            await connection.execute(
                update(switch_version)
                .where(switch_version.c.id == 1)
                .values(version=switch_version.c.version + 1)
            )
            version = int((await connection.execute(_VERSION)).scalar_one())
            found = await connection.scalar(select(switch.c.value).where(switch.c.name == name))
            old = default if found is None else str(found)
            if old == value:
                return None  # rolled back: the version stays
            if found is None:
                await connection.execute(insert(switch).values(name=name, value=value))
            else:
                await connection.execute(
                    update(switch).where(switch.c.name == name).values(value=value)
                )
            change = SwitchChange(version, name, old, value, actor, at)
            await connection.execute(
                insert(switch_change).values(
                    version=version,
                    name=name,
                    old_value=old,
                    new_value=value,
                    actor=actor,
                    changed_at=at,
                )
            )
            await tx.commit()
        finally:
            await tx.close()
        return change

    async def audit(self, limit: int) -> list[SwitchChange]:
        query = select(switch_change).order_by(switch_change.c.version.desc()).limit(limit)
        async with self._engine.connect() as connection:
            rows = await connection.execute(query)
            return [
                SwitchChange(r.version, r.name, r.old_value, r.new_value, r.actor, r.changed_at)
                for r in rows
            ]
