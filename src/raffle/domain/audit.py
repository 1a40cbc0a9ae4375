"""The audit log: operators' actions, payments and grants, each entry chained to the one before."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from raffle.domain.errors import RaffleError
from raffle.domain.fairness import canonical

GENESIS = "0" * 64  # the previous hash of a chain's first entry
CONFIG_CHAIN = "config"  # the configuration database's chain; a shard's is `shard_chain`'s
KIND_MAX, SUBJECT_MAX, ACTOR_MAX = 48, 128, 64  # characters kept (the columns' sizes)


def shard_chain(database: int, table: int) -> str:
    """The name of the chain of shard table `table` of shard database `database`."""
    return f"shard-{database}-{table:03d}"


class MissingHead(RaffleError):
    """A chain's head row is gone: the migration writes it and nothing deletes it."""

    code = "audit_head_missing"


@dataclass(frozen=True, slots=True)
class Action:
    """What happened, as a use case tells it: `kind` (e.g. `account.lock`), on what, by whom
    (None: the system or the command line), when, and what else says what changed."""

    kind: str
    subject: str
    at: datetime
    actor: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ChainHead:
    """A chain's last entry: its sequence number (0: none yet) and hash. Written down
    elsewhere, it pins every entry before it."""

    chain: str
    seq: int = 0
    hash: str = GENESIS


@dataclass(frozen=True, slots=True)
class AuditEntry:
    chain: str
    seq: int
    at: datetime
    kind: str
    subject: str
    actor: str | None
    details: str  # canonical JSON, as hashed
    prev: str
    hash: str

    @classmethod
    def after(cls, head: ChainHead, action: Action) -> AuditEntry:
        """The entry that follows `head` on its chain."""
        details = canonical(dict(action.details)).decode()
        seq, at = head.seq + 1, action.at.astimezone(UTC)
        actor = None if action.actor is None else action.actor[:ACTOR_MAX]
        kind, subject = action.kind[:KIND_MAX], action.subject[:SUBJECT_MAX]
        fields_ = (head.chain, seq, at, kind, subject, actor, details)
        return cls(*fields_, head.hash, entry_hash(*fields_, head.hash))

    def recomputed(self) -> str:
        return entry_hash(
            self.chain,
            self.seq,
            self.at,
            self.kind,
            self.subject,
            self.actor,
            self.details,
            self.prev,
        )

    def details_json(self) -> dict[str, Any]:
        loaded = json.loads(self.details)
        return loaded if isinstance(loaded, dict) else {}


def entry_hash(
    chain: str,
    seq: int,
    at: datetime,
    kind: str,
    subject: str,
    actor: str | None,
    details: str,
    prev: str,
) -> str:
    """SHA-256 of the entry's canonical JSON, the previous hash included."""
    encoded = canonical(
        {
            "chain": chain,
            "seq": seq,
            # Microseconds, UTC: what every database stores of a timestamp.
            "at": at.astimezone(UTC).isoformat(timespec="microseconds"),
            "kind": kind,
            "subject": subject,
            "actor": actor,
            "details": details,
            "prev": prev,
        }
    )
    return hashlib.sha256(encoded).hexdigest()


@dataclass(frozen=True, slots=True)
class BrokenLink:
    """The first entry of a chain that does not hold: its sequence number and what differs."""

    chain: str
    seq: int
    what: str

    def __str__(self) -> str:
        return f"{self.chain} #{self.seq}: {self.what}"


@dataclass
class ChainWalk:
    """Walks a chain's entries in sequence order, a page at a time, to its first broken link."""

    head: ChainHead  # as the head row holds it
    last: ChainHead = field(init=False)
    broken: BrokenLink | None = None

    def __post_init__(self) -> None:
        self.last = ChainHead(self.head.chain)

    def walk(self, entries: Iterable[AuditEntry]) -> bool:
        """Check the next entries; False once a link is broken (the rest need no reading)."""
        for entry in entries:
            if (what := self._problem(entry)) is not None:
                self.broken = BrokenLink(self.head.chain, self.last.seq + 1, what)
                return False
            self.last = ChainHead(self.head.chain, entry.seq, entry.hash)
        return True

    def end(self) -> BrokenLink | None:
        """After the last entry: the head row must name it."""
        if self.broken is None and self.last != self.head:
            seq = min(self.last.seq, self.head.seq) + 1
            self.broken = BrokenLink(
                self.head.chain,
                seq,
                f"the head names #{self.head.seq} ({self.head.hash[:12]}…) but the entries "
                f"end at #{self.last.seq} ({self.last.hash[:12]}…): entries missing",
            )
        return self.broken

    def _problem(self, entry: AuditEntry) -> str | None:
        expected = self.last.seq + 1
        if entry.seq != expected:
            return f"missing (the next entry is #{entry.seq})"
        if entry.prev != self.last.hash:
            return (
                f"its previous hash {entry.prev[:12]}… is not #{self.last.seq}'s "
                f"{self.last.hash[:12]}…"
            )
        if entry.recomputed() != entry.hash:
            return f"its content does not hash to its stored hash {entry.hash[:12]}… (altered)"
        return None
