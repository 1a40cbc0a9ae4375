"""Deny lists in SQL: entries, blocking rules, and a version row every change moves on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, delete, insert, or_, select
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.audit import SqlAuditLog
from raffle.adapters.sql.repositories.version_rows import moved_on, version_of
from raffle.adapters.sql.tables.audit import config_audit
from raffle.adapters.sql.tables.deny import block_rule, deny_entry, deny_version
from raffle.domain.audit import CONFIG_CHAIN
from raffle.domain.blocking import BlockEvent, BlockRule, BlockSubject
from raffle.domain.deny import DenyEntry, DenyKind, Evidence
from raffle.service.ports.deny import DenyQuery, Noted, StoredDenials

_VERSION = version_of(deny_version)
_CHUNK = 1000  # rows an INSERT carries: within every database's limit on parameters


class SqlDenyStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def version(self) -> int:
        async with self._engine.connect() as connection:
            return int((await connection.execute(_VERSION)).scalar_one())

    async def load(self, now: datetime) -> StoredDenials:
        in_force = select(deny_entry).where(_in_force(now))
        async with self._engine.connect() as connection:
            version = int((await connection.execute(_VERSION)).scalar_one())
            entries = [_entry(r) for r in await connection.execute(in_force)]
            rules = [_rule(r) for r in await connection.execute(select(block_rule))]
        return StoredDenials(version, entries, rules)

    async def add(self, entry: DenyEntry, note: Noted) -> DenyEntry:
        async with moved_on(self._engine, deny_version) as (connection, _):
            done = await connection.execute(insert(deny_entry).values(**_row(entry)))
            (entry_id,) = done.inserted_primary_key or (0,)
            stored = replace(entry, id=int(entry_id))
            await _audit(connection).append([note(stored)])
        return stored

    async def add_many(self, entries: Sequence[DenyEntry], note: Noted) -> int:
        rows = [_row(e) for e in entries]
        async with moved_on(self._engine, deny_version) as (connection, _):
            for start in range(0, len(rows), _CHUNK):
                await connection.execute(insert(deny_entry), rows[start : start + _CHUNK])
            await _audit(connection).append([note(e) for e in entries])
        return len(rows)

    async def lift(self, entry_id: int, note: Noted) -> DenyEntry | None:
        async with moved_on(self._engine, deny_version) as (connection, _):
            found = (
                await connection.execute(select(deny_entry).where(deny_entry.c.id == entry_id))
            ).first()
            if found is None:
                return None
            await connection.execute(delete(deny_entry).where(deny_entry.c.id == entry_id))
            lifted = _entry(found)
            await _audit(connection).append([note(lifted)])
        return lifted

    async def page(self, query: DenyQuery, after: int | None, limit: int) -> list[DenyEntry]:
        found = select(deny_entry).order_by(deny_entry.c.id.desc()).limit(limit)
        if after is not None:
            found = found.where(deny_entry.c.id < after)
        if query.kind is not None:
            found = found.where(deny_entry.c.kind == query.kind.value)
        if query.value is not None:
            found = found.where(deny_entry.c.value.startswith(query.value, autoescape=True))
        if query.automatic is not None:
            automatic = deny_entry.c.rule_id.is_not(None)
            found = found.where(automatic if query.automatic else ~automatic)
        if query.in_force_at is not None:
            found = found.where(_in_force(query.in_force_at))
        async with self._engine.connect() as connection:
            return [_entry(r) for r in await connection.execute(found)]

    async def add_rule(self, rule: BlockRule) -> BlockRule:
        row = {
            "event": rule.event.value,
            "subject": rule.subject.value,
            "threshold": rule.threshold,
            "window_minutes": rule.window_minutes,
            "block_minutes": rule.block_minutes,
            "created_by": rule.created_by,
            "created_at": rule.created_at,
        }
        async with moved_on(self._engine, deny_version) as (connection, _):
            done = await connection.execute(insert(block_rule).values(**row))
            (rule_id,) = done.inserted_primary_key or (0,)
        return replace(rule, id=int(rule_id))

    async def delete_rule(self, rule_id: int) -> bool:
        async with moved_on(self._engine, deny_version) as (connection, _):
            gone = await connection.execute(delete(block_rule).where(block_rule.c.id == rule_id))
            return bool(gone.rowcount)


def _audit(connection: SqlConnection) -> SqlAuditLog:
    # The configuration's chain, in the change's own transaction.
    return SqlAuditLog(connection, config_audit, CONFIG_CHAIN)


def _in_force(now: datetime) -> ColumnElement[bool]:
    return or_(deny_entry.c.expires_at.is_(None), deny_entry.c.expires_at > now)


def _row(entry: DenyEntry) -> dict[str, Any]:
    evidence = entry.evidence
    return {
        "kind": entry.kind.value,
        "value": entry.value,
        "reason": entry.reason,
        "added_by": entry.added_by,
        "added_at": entry.added_at,
        "expires_at": entry.expires_at,
        "rule_id": evidence.rule_id if evidence else None,
        "event": evidence.event if evidence else None,
        "event_count": evidence.count if evidence else None,
        "window_minutes": evidence.window_minutes if evidence else None,
        "first_event_at": evidence.first_at if evidence else None,
        "last_event_at": evidence.last_at if evidence else None,
    }


def _entry(row: Row[Any]) -> DenyEntry:
    evidence = None
    if row.rule_id is not None:
        evidence = Evidence(
            int(row.rule_id),
            row.event,
            int(row.event_count),
            int(row.window_minutes),
            row.first_event_at,
            row.last_event_at,
        )
    return DenyEntry(
        DenyKind(row.kind),
        row.value,
        row.reason,
        row.added_by,
        row.added_at,
        row.expires_at,
        evidence,
        int(row.id),
    )


def _rule(row: Row[Any]) -> BlockRule:
    return BlockRule(
        BlockEvent(row.event),
        BlockSubject(row.subject),
        int(row.threshold),
        int(row.window_minutes),
        int(row.block_minutes),
        row.created_by,
        row.created_at,
        int(row.id),
    )
