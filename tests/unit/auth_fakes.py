"""In-memory fakes for the sign-in use cases: users, sessions, a clock, a counting hasher."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from types import TracebackType
from typing import Self

from raffle.domain.audit import CONFIG_CHAIN, AuditEntry
from raffle.domain.users import Session, SessionEnded, StatusChange, User
from tests.unit.fakes import FakeAuditLog, FakeClock, FakeUsers

START = FakeClock().now()
__all__ = ["START", "FakeClock", "FakeSessionStore", "FakeUserUnitOfWork", "FakeUsers"]


class FakeUserUnitOfWork:
    """Keeps the users added only when committed, like a transaction."""

    def __init__(self) -> None:
        self.committed_users: dict[str, User] = {}
        self.committed_changes: list[StatusChange] = []
        self.committed_audit: list[AuditEntry] = []
        self.commits = 0

    async def __aenter__(self) -> Self:
        self.users = FakeUsers(dict(self.committed_users), list(self.committed_changes))
        self.audit = FakeAuditLog(list(self.committed_audit), CONFIG_CHAIN)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    async def commit(self) -> None:
        self.committed_users = dict(self.users.rows)
        self.committed_changes = list(self.users.changed)
        self.committed_audit = list(self.audit.rows)
        self.commits += 1


class CountingHasher:
    """A transparent 'hash' that counts how often hashing work was done."""

    def __init__(self) -> None:
        self.calls = 0

    async def hash_async(self, password: str) -> str:
        self.calls += 1
        return f"fake${password}"

    async def verify_async(self, password_hash: str, password: str) -> bool:
        self.calls += 1
        return password_hash == f"fake${password}"


class FakeSessionStore:
    """Sessions by token hash, expiring by the fake clock."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.rows: dict[str, Session] = {}
        self.ended: set[str] = set()  # kept in `rows` until they would have expired

    async def create(self, session: Session, token_hash: str, ttl_seconds: int) -> None:
        self.rows[token_hash] = replace(session, expires_at=self._expiry(ttl_seconds))

    async def touch(self, token_hash: str, ttl_seconds: int) -> Session | None:
        session = self.rows.get(token_hash)
        if session is None or session.expires_at <= self.clock.now():
            self.rows.pop(token_hash, None)
            self.ended.discard(token_hash)
            return None
        if token_hash in self.ended:
            raise SessionEnded("ended")
        session = self.rows[token_hash] = replace(session, expires_at=self._expiry(ttl_seconds))
        return session

    async def delete(self, token_hash: str) -> None:
        self.rows.pop(token_hash, None)
        self.ended.discard(token_hash)

    async def end_all(self, user_id: str) -> int:
        ended = [
            key
            for key, session in self.rows.items()
            if session.user_id == user_id and key not in self.ended
        ]
        self.ended.update(ended)
        return len(ended)

    def _expiry(self, ttl_seconds: int) -> datetime:
        return self.clock.now() + timedelta(seconds=ttl_seconds)
