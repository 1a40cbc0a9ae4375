"""An audit chain in SQL: its entries, and a head row each append locks until it commits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import insert, select, update

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.tables.audit import HEAD_ID, AuditTables
from raffle.domain.audit import Action, AuditEntry, ChainHead, MissingHead

_CHUNK = 500  # rows an INSERT carries: within every database's limit on parameters


class SqlAuditLog:
    def __init__(self, connection: SqlConnection, tables: AuditTables, chain: str) -> None:
        self._connection = connection
        self._tables = tables
        self.chain = chain

    async def append(self, actions: Sequence[Action]) -> list[AuditEntry]:
        if not actions:
            return []
        head = self._tables.head
        # FOR UPDATE (PostgreSQL, MariaDB): appends to this chain take turns until commit.
        # SQLite has one writer, whose transaction began IMMEDIATE: the turn is had already.
        locked = select(head.c.seq, head.c.hash).where(head.c.id == HEAD_ID).with_for_update()
        row = (await self._connection.execute(locked)).first()
        if row is None:
            raise MissingHead(f"audit chain {self.chain} has no head row")
        last = ChainHead(self.chain, int(row.seq), str(row.hash))
        entries = []
        for action in actions:
            entries.append(entry := AuditEntry.after(last, action))
            last = ChainHead(self.chain, entry.seq, entry.hash)
        rows = [_row(e) for e in entries]
        for start in range(0, len(rows), _CHUNK):
            await self._connection.execute(insert(self._tables.entry), rows[start : start + _CHUNK])
        moved = update(head).where(head.c.id == HEAD_ID).values(seq=last.seq, hash=last.hash)
        await self._connection.execute(moved)
        return entries

    async def head(self) -> ChainHead:
        head = self._tables.head
        query = select(head.c.seq, head.c.hash).where(head.c.id == HEAD_ID)
        row = (await self._connection.execute(query)).first()
        if row is None:
            raise MissingHead(f"audit chain {self.chain} has no head row")
        return ChainHead(self.chain, int(row.seq), str(row.hash))

    async def entries(self, after: int, through: int, limit: int) -> list[AuditEntry]:
        entry = self._tables.entry
        query = (
            select(entry)
            .where(entry.c.seq > after, entry.c.seq <= through)
            .order_by(entry.c.seq)
            .limit(limit)
        )
        return [self._entry(r) for r in await self._connection.execute(query)]

    def _entry(self, row: Any) -> AuditEntry:
        return AuditEntry(
            self.chain,
            int(row.seq),
            row.at,
            row.kind,
            row.subject,
            row.actor,
            row.details,
            row.prev,
            row.hash,
        )


def _row(entry: AuditEntry) -> dict[str, Any]:
    return {
        "seq": entry.seq,
        "at": entry.at,
        "kind": entry.kind,
        "subject": entry.subject,
        "actor": entry.actor,
        "details": entry.details,
        "prev": entry.prev,
        "hash": entry.hash,
    }
