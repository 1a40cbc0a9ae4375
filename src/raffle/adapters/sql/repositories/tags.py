"""Tags in SQL: the tags, static tags' members, and a version row every change moves on."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.version_rows import moved_on, version_of
from raffle.adapters.sql.tables.tags import tag, tag_member, tag_version
from raffle.domain.tags import Tag, TagKind
from raffle.service.ports.tags import Check, StoredTags

_VERSION = version_of(tag_version)
_CHUNK = 500  # user ids per statement: well under every database's limit on parameters


class SqlTagStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def version(self) -> int:
        async with self._engine.connect() as connection:
            return int((await connection.execute(_VERSION)).scalar_one())

    async def load(self) -> StoredTags:
        async with self._engine.connect() as connection:
            version = int((await connection.execute(_VERSION)).scalar_one())
            rows = list(await connection.execute(select(tag)))
        return StoredTags(
            version, {r.name: _tag(r) for r in rows}, {r.name: int(r.revision) for r in rows}
        )

    async def save(self, saved: Tag, check: Check) -> bool:
        async with moved_on(self._engine, tag_version) as (connection, version):
            check(await _others(connection, saved.name))
            found = await connection.scalar(select(tag.c.kind).where(tag.c.name == saved.name))
            row = {
                "kind": saved.kind.value,
                "condition": saved.condition,
                "description": saved.description,
                "revision": version,
            }
            if found is None:
                await connection.execute(insert(tag).values(name=saved.name, **row))
                return True
            await connection.execute(update(tag).where(tag.c.name == saved.name).values(**row))
            if saved.kind is TagKind.DYNAMIC:
                await connection.execute(delete(tag_member).where(tag_member.c.tag == saved.name))
            return False

    async def delete(self, name: str, check: Check) -> bool:
        async with moved_on(self._engine, tag_version) as (connection, _):
            check(await _others(connection, name))
            await connection.execute(delete(tag_member).where(tag_member.c.tag == name))
            deleted = await connection.execute(delete(tag).where(tag.c.name == name))
            return bool(deleted.rowcount)

    async def members(self, name: str) -> frozenset[str]:
        query = select(tag_member.c.user_id).where(tag_member.c.tag == name)
        async with self._engine.connect() as connection:
            return frozenset(str(u) for u in (await connection.execute(query)).scalars())

    async def add_members(self, name: str, user_ids: Iterable[str]) -> int:
        added = 0
        async with moved_on(self._engine, tag_version) as (connection, version):
            await _revise(connection, name, version)
            for chunk in _chunks(user_ids):
                have = await _present(connection, name, chunk)
                if new := [u for u in chunk if u not in have]:
                    await connection.execute(
                        insert(tag_member), [{"tag": name, "user_id": u} for u in new]
                    )
                    added += len(new)
        return added

    async def remove_members(self, name: str, user_ids: Iterable[str]) -> int:
        removed = 0
        async with moved_on(self._engine, tag_version) as (connection, version):
            await _revise(connection, name, version)
            for chunk in _chunks(user_ids):
                gone = await connection.execute(
                    delete(tag_member).where(
                        tag_member.c.tag == name, tag_member.c.user_id.in_(chunk)
                    )
                )
                removed += gone.rowcount
        return removed


async def _others(connection: SqlConnection, name: str) -> dict[str, Tag]:
    """Every tag but the one named `name`."""
    rows = await connection.execute(select(tag).where(tag.c.name != name))
    return {r.name: _tag(r) for r in rows}


def _tag(row: Row[Any]) -> Tag:
    return Tag(row.name, TagKind(row.kind), row.condition, row.description)


async def _revise(connection: SqlConnection, name: str, version: int) -> None:
    await connection.execute(update(tag).where(tag.c.name == name).values(revision=version))


async def _present(connection: SqlConnection, name: str, chunk: list[str]) -> set[str]:
    query = select(tag_member.c.user_id).where(
        tag_member.c.tag == name, tag_member.c.user_id.in_(chunk)
    )
    return {str(u) for u in (await connection.execute(query)).scalars()}


def _chunks(user_ids: Iterable[str]) -> Iterable[list[str]]:
    unique = list(dict.fromkeys(user_ids))  # a list naming a user twice adds them once
    for start in range(0, len(unique), _CHUNK):
        yield unique[start : start + _CHUNK]
