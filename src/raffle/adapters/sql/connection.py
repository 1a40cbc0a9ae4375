"""What repositories execute on: an async SQLAlchemy connection, or on SQLite a synchronous
one run straight on the event loop, its lock waits and WAL checkpoints kept off it
(docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import weakref
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, Protocol

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, CursorResult, Dialect, Engine, NestedTransaction
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql.base import Executable

from raffle.adapters.sql.sqlite_setup import sqlite_listeners

log = logging.getLogger(__name__)
Params = Mapping[str, Any] | Sequence[Mapping[str, Any]] | None
Rows = CursorResult[*tuple[Any, ...]]  # rows of any width, as AsyncConnection gives

BUSY_WAIT_SECONDS = 5.0  # how long a writer waits for another process's lock
CHECKPOINT_SECONDS = 1.0
RESTART_FRAMES = 50_000  # a WAL this long is started over (Checkpoints)
_FIRST_SLEEP, _MAX_SLEEP = 0.001, 0.05


class Savepoint(Protocol):
    async def commit(self) -> None: ...

    async def rollback(self) -> None: ...


class SqlConnection(Protocol):
    """The part of `AsyncConnection` the repositories use."""

    def begin_nested(self) -> Awaitable[Savepoint]:
        """A savepoint in the transaction: rolling it back undoes only what followed it."""
        ...

    @property
    def dialect(self) -> Dialect: ...

    async def execute(self, statement: Executable, parameters: Params = None) -> Rows: ...

    async def scalar(
        self, statement: Executable, parameters: Mapping[str, Any] | None = None
    ) -> Any: ...


class SqliteConnection:
    """A synchronous SQLAlchemy connection to SQLite behind the async interface."""

    def __init__(self, connection: Connection, twin: _Twin) -> None:
        self._connection = connection
        self._twin = twin

    @property
    def dialect(self) -> Dialect:
        return self._connection.dialect

    async def execute(self, statement: Executable, parameters: Params = None) -> Rows:
        return self._connection.execute(statement, parameters)

    async def scalar(
        self, statement: Executable, parameters: Mapping[str, Any] | None = None
    ) -> Any:
        return self._connection.scalar(statement, parameters)

    async def begin_nested(self) -> Savepoint:
        return _SqliteSavepoint(self._connection.begin_nested())

    def driver(self) -> sqlite3.Connection:
        """The sqlite3 connection underneath, in this transaction (for the draw's statements)."""
        driver = self._connection.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        return driver

    async def commit(self) -> None:
        self._connection.commit()
        await self._twin.checkpoints.after_commit(self.driver())

    async def rollback(self) -> None:
        self._connection.rollback()

    async def close(self) -> None:
        """End the transaction; the connection stays open for the next one (see _Twin)."""
        try:
            self._connection.rollback()  # a no-op after commit
        except BaseException:
            self._twin.drop()  # not to be used again in an unknown state
            raise


class _SqliteSavepoint:
    def __init__(self, savepoint: NestedTransaction) -> None:
        self._savepoint = savepoint

    async def commit(self) -> None:
        self._savepoint.commit()

    async def rollback(self) -> None:
        self._savepoint.rollback()


class Checkpoints:
    """Checkpoints of one SQLite file's WAL in worker threads, one every CHECKPOINT_SECONDS at
    most, on a connection of their own beside the writer (PASSIVE: it copies what no reader
    needs and never waits for, nor blocks, the writer).

    Beside a steady writer such a checkpoint never catches up, so the WAL never restarts: it
    grew without bound, and as every page read searches the WAL's index, each draw then cost
    more than the one before. So once the WAL holds more than
    RESTART_FRAMES, the next commit is followed by a checkpoint on the writer's own
    connection while that transaction still holds the process's turn: it catches up (with
    only what came in since the last one to copy), and the next transaction starts the WAL
    over. SQLite work waits for that; the loop does not.
    """

    def __init__(self, path: str) -> None:
        self._path = path
        self._due = 0.0
        self._running: asyncio.Future[int] | None = None
        self._catch_up = False

    async def after_commit(self, driver: sqlite3.Connection) -> None:
        loop = asyncio.get_running_loop()
        if self._catch_up:
            self._catch_up = False
            await self._on_the_writer(loop, driver)
        elif self._running is None and loop.time() >= self._due:
            self._due = loop.time() + CHECKPOINT_SECONDS
            self._running = loop.run_in_executor(None, self._beside)
            self._running.add_done_callback(self._done)

    def _beside(self) -> int:
        connection = sqlite3.connect(self._path, timeout=BUSY_WAIT_SECONDS)
        try:
            return _checkpoint(connection)
        finally:
            connection.close()

    def _done(self, future: asyncio.Future[int]) -> None:
        self._running = None
        if future.cancelled():
            return
        if (error := future.exception()) is not None:
            log.warning("WAL checkpoint of %s failed: %r", self._path, error)
        else:
            self._catch_up = future.result() > RESTART_FRAMES

    async def _on_the_writer(
        self, loop: asyncio.AbstractEventLoop, driver: sqlite3.Connection
    ) -> None:
        running = loop.run_in_executor(None, _checkpoint, driver)
        try:
            await asyncio.shield(running)
        except asyncio.CancelledError:
            # The connection is the thread's until it is done: the turn is held till then.
            await asyncio.wait([running])
            raise
        except sqlite3.Error as error:
            log.warning("WAL checkpoint of %s failed: %r", self._path, error)


def _checkpoint(connection: sqlite3.Connection) -> int:
    """A PASSIVE checkpoint; the frames in the WAL since it last started over."""
    _busy, frames, _copied = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return int(frames)


_sync_engines: weakref.WeakKeyDictionary[Engine, _Twin] = weakref.WeakKeyDictionary()
_foreign_keys: weakref.WeakKeyDictionary[Engine, bool] = weakref.WeakKeyDictionary()


def remember_foreign_keys(engine: AsyncEngine, foreign_keys: bool) -> None:
    """Whether the engine enforces foreign keys: its synchronous twin does the same."""
    _foreign_keys[engine.sync_engine] = foreign_keys


def sqlite_file(engine: AsyncEngine) -> bool:
    """True for an async engine on an SQLite file (not `:memory:`): it gets the sync path."""
    url = engine.url
    return url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:")


async def begin_sqlite(engine: AsyncEngine) -> SqliteConnection:
    """The engine's synchronous connection in a transaction begun IMMEDIATE, waiting on the
    loop (not in the busy handler) while another process holds the write lock."""
    twin = _twin(engine)
    deadline = asyncio.get_running_loop().time() + BUSY_WAIT_SECONDS
    sleep = _FIRST_SLEEP
    while True:
        connection = twin.connection()
        try:
            connection.begin()  # BEGIN IMMEDIATE, from the "begin" listener
            return SqliteConnection(connection, twin)
        except OperationalError as error:
            twin.drop()
            if "locked" not in str(error) or asyncio.get_running_loop().time() > deadline:
                raise
        except BaseException:
            twin.drop()
            raise
        await asyncio.sleep(sleep)
        sleep = min(sleep * 2, _MAX_SLEEP)


class _Twin:
    """The synchronous engine, and the one connection the process's transactions take turns
    on: kept open between them, which spares a pool checkout and return (and its reset) per
    transaction."""

    def __init__(self, engine: Engine, checkpoints: Checkpoints) -> None:
        self.engine = engine
        self.checkpoints = checkpoints
        self._connection: Connection | None = None

    def connection(self) -> Connection:
        if self._connection is None or self._connection.closed:
            self._connection = self.engine.connect()
        return self._connection

    def drop(self) -> None:
        """Close the connection (after a failure): the next transaction opens another."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def dispose(self) -> None:
        self.drop()
        self.engine.dispose()


def sync_twin(engine: AsyncEngine) -> Engine:
    """The synchronous twin of an async SQLite engine: same file, same pragmas but no
    automatic checkpoints, made once; disposed of with it."""
    return _twin(engine).engine


def _twin(engine: AsyncEngine) -> _Twin:
    key = engine.sync_engine
    if (twin := _sync_engines.get(key)) is None:
        url = engine.url.set(drivername="sqlite")
        sync = create_engine(url, connect_args={"check_same_thread": False})
        foreign_keys = _foreign_keys.get(key, True)
        sqlite_listeners(sync, foreign_keys=foreign_keys, busy_ms=0)
        event.listen(sync, "connect", _no_autocheckpoint)
        twin = _sync_engines[key] = _Twin(sync, Checkpoints(str(engine.url.database)))
        event.listen(key, "engine_disposed", lambda _engine: twin.dispose())
    return twin


def _no_autocheckpoint(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.execute("PRAGMA wal_autocheckpoint = 0")
