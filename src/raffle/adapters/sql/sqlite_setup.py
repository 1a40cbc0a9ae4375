"""What every SQLite connection gets: its pragmas on connect, and BEGIN IMMEDIATE."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError


def sqlite_listeners(engine: Engine, *, foreign_keys: bool, busy_ms: int) -> None:
    """Pragmas on connect, and BEGIN IMMEDIATE for every transaction."""
    event.listen(engine, "connect", _sqlite_connect(foreign_keys, busy_ms))
    event.listen(engine, "begin", _sqlite_begin)


def _sqlite_connect(foreign_keys: bool, busy_ms: int) -> Callable[[Any, Any], None]:
    def connect(dbapi_connection: Any, _record: Any) -> None:
        # Python's sqlite3 (before 3.12) begins transactions only before DML, so reads and
        # DDL would run outside them; we take over BEGIN ourselves (see _sqlite_begin).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA foreign_keys = {'ON' if foreign_keys else 'OFF'}")
        cursor.execute("PRAGMA journal_mode = WAL")  # readers do not block the writer
        # In WAL mode NORMAL syncs at checkpoints, not at every commit: a commit survives the
        # process crashing, though not the machine losing power. FULL costs an fsync a draw.
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute(f"PRAGMA busy_timeout = {busy_ms}")
        cursor.close()

    return connect


def _sqlite_begin(connection: Connection) -> None:
    # Take the write lock now, not mid-way. On the DB-API cursor: SQLAlchemy's execution
    # machinery around a statement costs more than the statement, once per transaction.
    dbapi = connection.dialect.loaded_dbapi
    cursor = connection.connection.cursor()
    try:
        cursor.execute("BEGIN IMMEDIATE")
    except dbapi.Error as error:  # as SQLAlchemy would raise it ("database is locked", ...)
        raise DBAPIError.instance("BEGIN IMMEDIATE", None, error, dbapi.Error) from error
    finally:
        cursor.close()
