"""Profiles in SQL: a row a user, read back as domain Profiles; searched and paged by user id."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy import Row, Select, bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.version_rows import version_of
from raffle.adapters.sql.tables.profiles import profile as table
from raffle.adapters.sql.tables.profiles import profile_version
from raffle.domain.errors import Contention
from raffle.domain.profile_fields import PhoneTaken, attribute, attributes_json, plain
from raffle.domain.profiles import Gender, Profile
from raffle.service.ports.audiences import ProfileQuery, StoredProfile

_IN_CHUNK = 500  # ids in one IN list: well under every database's limit of parameters
_COLUMNS = [c.name for c in table.columns if c.name != "user_id"]
_VERSION = version_of(profile_version)
_MOVE_ON = (
    update(profile_version)
    .where(profile_version.c.id == 1)
    .values(version=profile_version.c.version + 1)
)
_UPDATE = (
    update(table)
    .where(table.c.user_id == bindparam("key"))
    .values({name: bindparam(name) for name in _COLUMNS})
)


class SqlProfileRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection
        self._moved = False  # the version row moved on in this transaction

    async def get(self, user_id: str) -> Profile | None:
        found = await self.stored(user_id)
        return None if found is None else found.profile

    async def stored(self, user_id: str) -> StoredProfile | None:
        rows = await self._connection.execute(select(table).where(table.c.user_id == user_id))
        row = rows.first()
        return None if row is None else _stored(row)

    async def many(self, user_ids: Collection[str]) -> dict[str, Profile]:
        ids, found = list(dict.fromkeys(user_ids)), {}
        for start in range(0, len(ids), _IN_CHUNK):
            query = select(table).where(table.c.user_id.in_(ids[start : start + _IN_CHUNK]))
            for row in await self._connection.execute(query):
                found[row.user_id] = _profile(row)
        return found

    async def for_change(self, user_ids: Collection[str]) -> dict[str, Profile]:
        # The version row first: a change waiting for another reads after that one committed,
        # so what it writes is never made from a read the other outdated.
        await self._moved_on()
        ids, found = sorted(set(user_ids)), {}  # locked in one order: no deadlock between two
        for start in range(0, len(ids), _IN_CHUNK):
            query = (
                select(table)
                .where(table.c.user_id.in_(ids[start : start + _IN_CHUNK]))
                .order_by(table.c.user_id)
                .with_for_update()
            )
            for row in await self._connection.execute(query):
                found[row.user_id] = _profile(row)
        return found

    async def phone_owners(self, phones: Collection[str]) -> dict[str, str]:
        numbers, owners = list(dict.fromkeys(phones)), {}
        for start in range(0, len(numbers), _IN_CHUNK):
            query = select(table.c.phone, table.c.user_id).where(
                table.c.phone.in_(numbers[start : start + _IN_CHUNK])
            )
            owners.update({str(p): str(u) for p, u in await self._connection.execute(query)})
        return owners

    async def put(self, profile: Profile, at: datetime) -> None:
        # Update, else insert; not one upsert: MariaDB's ON DUPLICATE KEY UPDATE fires on the
        # phone's unique key too, and would write this profile over its owner's.
        # In a savepoint: a number taken by another transaction fails this statement only,
        # and the rest of the transaction (an import's other rows) goes on.
        row = _row(profile, at)
        await self._moved_on()
        savepoint = await self._connection.begin_nested()
        try:
            await self._write(row)
        except IntegrityError:
            await savepoint.rollback()
            owner = (await self.phone_owners([profile.phone] if profile.phone else [])).get(
                str(profile.phone)
            )
            if owner not in (None, profile.user_id):
                # Not whose: a player's own edit can meet it (the owner is no player's to know).
                raise PhoneTaken(f"phone {profile.phone} is another user's") from None
            # The user's row was inserted by another transaction since this one read none:
            # this profile was made from a stale read, so the whole transaction runs again.
            raise Contention(f"the profile of {profile.user_id} was created meanwhile") from None
        await savepoint.commit()

    async def put_all(self, profiles: Sequence[Profile], at: datetime) -> dict[str, PhoneTaken]:
        # Two statements for the lot in the common case (no phone clash): a round trip a row
        # each would make an import of a CRM's list take minutes.
        rows = [_row(p, at) for p in profiles]
        stored = set(await self.many([r["user_id"] for r in rows]))
        await self._moved_on()
        savepoint = await self._connection.begin_nested()
        try:
            if updates := [_keyed(r) for r in rows if r["user_id"] in stored]:
                await self._connection.execute(_UPDATE, updates)
            if inserts := [r for r in rows if r["user_id"] not in stored]:
                await self._connection.execute(insert(table), inserts)
        except IntegrityError:  # a phone clash (or a row inserted meanwhile): row by row
            await savepoint.rollback()
            return await self._one_by_one(profiles, at)
        await savepoint.commit()
        return {}

    async def version(self) -> int:
        return int((await self._connection.execute(_VERSION)).scalar_one())

    async def _moved_on(self) -> None:
        # Before any row is written: no writer holds the version row while it waits for a
        # row (or a phone's unique key) that another writer, waiting for it, wrote.
        if not self._moved:
            await self._connection.execute(_MOVE_ON)
            self._moved = True

    async def _one_by_one(self, profiles: Sequence[Profile], at: datetime) -> dict[str, PhoneTaken]:
        refused = {}
        for profile in profiles:
            try:
                await self.put(profile, at)
            except PhoneTaken as error:
                refused[profile.user_id] = error
        return refused

    async def _write(self, row: dict[str, Any]) -> None:
        changed = await self._connection.execute(
            update(table).where(table.c.user_id == row["user_id"]).values(row)
        )
        # Matched rows, also on MySQL: SQLAlchemy connects with CLIENT_FOUND_ROWS there.
        if changed.rowcount == 0:
            await self._connection.execute(insert(table).values(row))

    async def page(self, after: str | None, limit: int) -> Sequence[Profile]:
        found = await self.search(ProfileQuery(), after, limit)
        return [s.profile for s in found]

    async def search(
        self, query: ProfileQuery, after: str | None, limit: int
    ) -> list[StoredProfile]:
        statement = _filtered(select(table), query)
        if after is not None:
            statement = statement.where(table.c.user_id > after)
        rows = await self._connection.execute(statement.order_by(table.c.user_id).limit(limit))
        return [_stored(row) for row in rows]


def _filtered(statement: Select[Any], query: ProfileQuery) -> Select[Any]:
    c = table.c
    if query.user_prefix:
        statement = statement.where(c.user_id.startswith(query.user_prefix, autoescape=True))
    if query.phone is not None:
        statement = statement.where(c.phone == query.phone)
    if query.level is not None:
        statement = statement.where(c.level == query.level)
    if query.region is not None:
        statement = statement.where(c.region == query.region)
    return statement


def _row(profile: Profile, at: datetime) -> dict[str, Any]:
    attributes = json.dumps(attributes_json(profile), ensure_ascii=False, sort_keys=True)
    return {**plain(profile), "attributes": attributes, "updated_at": at}


def _keyed(row: dict[str, Any]) -> dict[str, Any]:
    """The row's values for _UPDATE: its user id bound as `key` (a bind parameter may not
    share a column's name in an UPDATE's SET)."""
    return {"key": row["user_id"], **{name: row[name] for name in _COLUMNS}}


def _profile(row: Row[Any]) -> Profile:
    stored: dict[str, Any] = json.loads(row.attributes)
    return Profile(
        user_id=row.user_id,
        phone=row.phone,
        level=row.level,
        gender=None if row.gender is None else Gender(row.gender),
        birth_date=None if row.birth_date is None else date.fromisoformat(row.birth_date),
        region=row.region,
        channel=row.channel,
        sn=row.sn,
        attributes={name: attribute(value) for name, value in stored.items()},
    )


def _stored(row: Row[Any]) -> StoredProfile:
    return StoredProfile(_profile(row), row.updated_at)
