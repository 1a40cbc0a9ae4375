"""The door to an audit chain: appended to in the transaction of the action it records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from raffle.domain.audit import Action, AuditEntry, ChainHead
from raffle.service.ports.base import Transaction


class AuditLog(Protocol):
    """One chain (`UnitOfWork.audit`: the configuration's; `ShardUnitOfWork.audit`: the
    shard's). Appends take turns on the chain's head until their transaction ends."""

    chain: str

    async def append(self, actions: Sequence[Action]) -> list[AuditEntry]:
        """Chain the actions after the head, in order, and move the head to the last."""
        ...

    async def head(self) -> ChainHead:
        """The chain's head as its head row holds it (not locked); MissingHead if gone."""
        ...

    async def entries(self, after: int, through: int, limit: int) -> list[AuditEntry]:
        """Up to `limit` entries with sequence numbers above `after` and up to `through`,
        in order."""
        ...


class Audited(Transaction, Protocol):
    """A transaction on a database that holds a chain: either unit of work."""

    audit: AuditLog
