"""Sessions in the `session` table (the embedded default; redis_sessions.py keeps them in Redis).

Both stores are keyed by the SHA-256 of the token, never the token itself, and slide the expiry to
`ttl_seconds` from now on `touch` (SQL: once a little of the TTL has passed, see SLIDE_AFTER).
A session ended by `end_all` (a lock, a new password) stays, marked ended, until it would
have expired, so that its token is told SessionEnded rather than "not signed in".
"""

from __future__ import annotations

import contextlib
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import bindparam, delete, event, insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.connection import sqlite_file
from raffle.adapters.sql.tables.config import session as session_table
from raffle.adapters.sql.transaction import transaction
from raffle.domain.users import Session, SessionEnded
from raffle.service.ports import Clock

# A session's expiry slides only once this share of its TTL has passed since the last slide:
# most requests then just read it (on SQLite a write is a turn of the process's one writer).
# It may so expire up to that share of the TTL earlier than "TTL after the last use".
SLIDE_AFTER = 0.01
ENDED = "an operator ended this session: sign in again"

_BY_TOKEN = session_table.c.token_hash == bindparam("token")
_FIND = select(
    session_table.c.user_id,
    session_table.c.is_admin,
    session_table.c.expires_at,
    session_table.c.ended_at,
).where(_BY_TOKEN)
_SLIDE = (
    update(session_table)
    .where(
        _BY_TOKEN,
        session_table.c.expires_at > bindparam("now"),
        session_table.c.ended_at.is_(None),
    )
    .values(expires_at=bindparam("slid_to"))
)
_DROP_EXPIRED = delete(session_table).where(
    _BY_TOKEN, session_table.c.expires_at <= bindparam("now")
)


class SqlSessionStore:
    def __init__(self, engine: AsyncEngine, clock: Clock) -> None:
        self._engine = engine
        self._clock = clock
        self._reader = _SqliteReader(engine) if sqlite_file(engine) else None

    async def create(self, session: Session, token_hash: str, ttl_seconds: int) -> None:
        expires_at = self._clock.now() + timedelta(seconds=ttl_seconds)
        async with transaction(self._engine) as connection:
            await connection.execute(
                insert(session_table).values(
                    token_hash=token_hash,
                    user_id=session.user_id,
                    is_admin=session.is_admin,
                    expires_at=expires_at,
                )
            )

    async def touch(self, token_hash: str, ttl_seconds: int) -> Session | None:
        now = self._clock.now()
        wanted = now + timedelta(seconds=ttl_seconds)
        if self._reader is not None and (row := self._reader.find(token_hash)) is not None:
            # Most touches only read: on SQLite without a transaction, nor the writer's turn.
            # An expired session, or one due to slide, goes the way below (a write).
            user_id, is_admin, expires_at, ended = row
            if now < expires_at and ended:
                raise SessionEnded(ENDED)
            if now < expires_at and (wanted - expires_at).total_seconds() < (
                ttl_seconds * SLIDE_AFTER
            ):
                return Session(user_id=user_id, is_admin=is_admin, expires_at=expires_at)
        params = {"token": token_hash, "now": now, "slid_to": wanted}
        async with transaction(self._engine) as connection:
            row = (await connection.execute(_FIND, params)).first()
            if row is None:
                return None
            if row.expires_at <= now:
                await connection.execute(_DROP_EXPIRED, params)
                return None
            if row.ended_at is not None:
                raise SessionEnded(ENDED)
            expires_at = row.expires_at
            if (wanted - expires_at).total_seconds() >= ttl_seconds * SLIDE_AFTER:
                # Guarded by the expiry, so a session never outlives it by a race; MariaDB
                # counts matched rows, not changed ones (SQLAlchemy asks for FOUND_ROWS).
                if (await connection.execute(_SLIDE, params)).rowcount == 0:
                    return None  # deleted (logged out) or ended since the SELECT
                expires_at = wanted
        return Session(user_id=row.user_id, is_admin=row.is_admin, expires_at=expires_at)

    async def delete(self, token_hash: str) -> None:
        async with transaction(self._engine) as connection:
            await connection.execute(
                delete(session_table).where(session_table.c.token_hash == token_hash)
            )

    async def end_all(self, user_id: str) -> int:
        t = session_table
        async with transaction(self._engine) as connection:
            result = await connection.execute(
                update(t)
                .where(t.c.user_id == user_id, t.c.ended_at.is_(None))
                .values(ended_at=self._clock.now())
            )
        return result.rowcount

    async def watch(self) -> None:
        """Nothing to keep in step: every touch reads the table."""

    async def delete_expired(self) -> int:
        """Delete the sessions nobody touched before they expired; how many there were."""
        async with transaction(self._engine) as connection:
            result = await connection.execute(
                delete(session_table).where(session_table.c.expires_at <= self._clock.now())
            )
        return result.rowcount


class _SqliteReader:
    """A connection of its own to the SQLite file, in autocommit, that only reads sessions.

    In WAL mode a read neither waits for the writer nor blocks it, and each SELECT sees
    what was committed before it: a logout or a deletion by any process counts at once.
    Opened on first use, closed with the engine.
    """

    _COLUMNS = "user_id, is_admin, expires_at, ended_at IS NOT NULL"
    _SQL = f"SELECT {_COLUMNS} FROM {session_table.name} WHERE token_hash = ?"  # noqa: S608

    def __init__(self, engine: AsyncEngine) -> None:
        self._path = str(engine.url.database)
        self._connection: sqlite3.Connection | None = None
        event.listen(engine.sync_engine, "engine_disposed", lambda _engine: self.close())

    def find(self, token_hash: str) -> tuple[str, bool, datetime, bool] | None:
        """The session's user, role, expiry and whether it was ended; None if absent or
        unreadable right now (the caller then asks in a transaction)."""
        try:
            if self._connection is None:
                self._connection = self._open()
            # fetchall: the statement runs to its end, which ends its read transaction.
            rows = self._connection.execute(self._SQL, (token_hash,)).fetchall()
        except sqlite3.Error:
            self.close()
            return None
        if not rows:
            return None
        user_id, is_admin, expires_at, ended = rows[0]
        at = datetime.fromisoformat(expires_at).replace(tzinfo=UTC)
        return user_id, bool(is_admin), at, bool(ended)

    def _open(self) -> sqlite3.Connection:
        # mode=rw: never creates the file. A short timeout: it blocks the loop, and a miss
        # only costs the slower way.
        connection = sqlite3.connect(
            f"{Path(self._path).resolve().as_uri()}?mode=rw",
            uri=True,
            timeout=0.05,
            isolation_level=None,
            check_same_thread=False,
        )
        connection.execute("PRAGMA query_only = 1")
        return connection

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(sqlite3.Error):
                connection.close()
