"""The audit log: actions recorded in their transaction, every chain walked, its head shown."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from raffle.domain.audit import Action, BrokenLink, ChainHead, ChainWalk, MissingHead
from raffle.domain.deny import DenyEntry
from raffle.service.ports import Shards, UnitOfWork
from raffle.service.ports.audit import Audited, AuditLog
from raffle.service.ports.deny import Noted

PAGE = 1000  # entries read a transaction: a walk never holds SQLite's one writer for long


async def record(
    log: AuditLog,
    kind: str,
    subject: object,
    at: datetime,
    *,
    actor: str | None = None,
    details: Mapping[str, Any] | None = None,
) -> None:
    """Append one action to `log`'s chain, in the transaction `log` belongs to: the action
    and its entry are kept together or not at all."""
    await log.append([Action(kind, str(subject), at, actor, dict(details or {}))])


def deny_added(entry: DenyEntry) -> Action:
    """An entry put on a deny list, by hand or by a blocking rule (its `added_by`)."""
    return Action("deny.add", _listed(entry), entry.added_at, entry.added_by, _deny(entry))


def deny_lifted(by: str | None, at: datetime) -> Noted:
    def lifted(entry: DenyEntry) -> Action:
        return Action("deny.lift", _listed(entry), at, by, _deny(entry))

    return lifted


def _listed(entry: DenyEntry) -> str:
    return f"{entry.kind.value}:{entry.value}"


def _deny(entry: DenyEntry) -> dict[str, Any]:
    expires = None if entry.expires_at is None else entry.expires_at.isoformat()
    return {"id": entry.id, "reason": entry.reason, "expires_at": expires}


@dataclass(frozen=True, slots=True)
class ChainReport:
    head: ChainHead
    broken: BrokenLink | None


def chains(uow: Callable[[], UnitOfWork], shards: Shards) -> list[Callable[[], Audited]]:
    """An opener of a transaction on each chain's database: the configuration's, then every
    shard's in routing order."""
    count = len(shards.every())
    return [uow, *(_shard(shards, i) for i in range(count))]


async def heads(uow: Callable[[], UnitOfWork], shards: Shards) -> list[ChainHead]:
    """Every chain's head, to be written down elsewhere: any later change to an entry at or
    before it shows."""
    found = []
    for opener in chains(uow, shards):
        async with opener() as reader:
            found.append(await reader.audit.head())
    return found


async def verify(
    uow: Callable[[], UnitOfWork], shards: Shards, *, page: int = PAGE
) -> list[ChainReport]:
    """Walk every chain from its first entry to its head; each chain's first broken link."""
    return [await _walk(opener, page) for opener in chains(uow, shards)]


async def _walk(opener: Callable[[], Audited], page: int) -> ChainReport:
    async with opener() as reader:
        chain = reader.audit.chain
        try:
            head = await reader.audit.head()
        except MissingHead:
            return ChainReport(ChainHead(chain), BrokenLink(chain, 0, "the head row is missing"))
    # Entries only up to the head read first: those appended meanwhile come with a head of
    # their own, so a walk beside live appends never sees a chain half written.
    walk = ChainWalk(head)
    while walk.last.seq < head.seq:
        async with opener() as reader:
            entries = await reader.audit.entries(walk.last.seq, head.seq, page)
        if not entries or not walk.walk(entries):
            break
    return ChainReport(head, walk.end())


def _shard(shards: Shards, index: int) -> Callable[[], Audited]:
    return lambda: shards.every()[index]
