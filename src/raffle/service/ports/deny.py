"""The door to the deny lists and the automatic blocking rules, in the configuration database."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from raffle.domain.audit import Action
from raffle.domain.blocking import BlockRule
from raffle.domain.deny import DenyEntry, DenyKind

Noted = Callable[[DenyEntry], Action]  # a change to the list as the audit log keeps it


@dataclass(frozen=True, slots=True)
class StoredDenials:
    """The entries in force and every rule, at one version."""

    version: int
    entries: Sequence[DenyEntry]
    rules: Sequence[BlockRule]


@dataclass(frozen=True, slots=True)
class DenyQuery:
    """A page of the list: entries of `kind`, whose value starts with `value`, added
    automatically or by hand (None: either), in force at `in_force_at` (None: any)."""

    kind: DenyKind | None = None
    value: str | None = None
    automatic: bool | None = None
    in_force_at: datetime | None = None


class DenyStore(Protocol):
    """Deny entries and blocking rules, with a version every change moves on (as the
    switches and the tags have) so that every process sees a change."""

    async def version(self) -> int: ...

    async def load(self, now: datetime) -> StoredDenials:
        """The version (read first), the entries in force at `now`, and the rules."""
        ...

    async def add(self, entry: DenyEntry, note: Noted) -> DenyEntry:
        """Store the entry; it comes back with its id. `note` of it is appended to the
        audit log in the same transaction (as for the other changes)."""
        ...

    async def add_many(self, entries: Sequence[DenyEntry], note: Noted) -> int:
        """Store the entries in one transaction (an import); how many."""
        ...

    async def lift(self, entry_id: int, note: Noted) -> DenyEntry | None:
        """Remove an entry; the one removed, or None if there was none."""
        ...

    async def page(self, query: DenyQuery, after: int | None, limit: int) -> list[DenyEntry]:
        """Entries matching `query`, newest first (ids below `after`)."""
        ...

    async def add_rule(self, rule: BlockRule) -> BlockRule: ...

    async def delete_rule(self, rule_id: int) -> bool: ...
