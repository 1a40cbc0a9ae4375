"""One connection, one transaction: rolled back unless committed, always closed.

On SQLite every transaction of a process takes turns behind one asyncio lock and starts
with BEGIN IMMEDIATE. SQLite has one writer at a time anyway; waiting on a lock in the
event loop is cheaper than its busy handler's sleeps, and a transaction that read first
can no longer fail with "database is locked" when it then writes. Holding the turn, it runs
on a synchronous connection, straight on the loop (see connection.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Self

from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from raffle.adapters.sql.connection import (
    SqlConnection,
    SqliteConnection,
    begin_sqlite,
    sqlite_file,
)
from raffle.domain.errors import Contention

_sqlite_turns: weakref.WeakKeyDictionary[Engine, asyncio.Lock] = weakref.WeakKeyDictionary()
_sqlite_holders: weakref.WeakKeyDictionary[Engine, asyncio.Task[object]] = (
    weakref.WeakKeyDictionary()
)


# Deadlock victims and serialisation failures: the transaction was rolled back whole.
_MYSQL_RETRY = {1213, 1205}  # deadlock; lock wait timeout
_POSTGRES_RETRY = {"40P01", "40001"}  # deadlock_detected; serialization_failure


def contention(error: BaseException) -> Contention | None:
    """The error as a Contention, if the database rolled the transaction back to resolve one."""
    cause: BaseException | None
    if isinstance(error, DBAPIError):
        cause = error.orig
        code = getattr(cause, "sqlstate", None) or (getattr(cause, "args", None) or [None])[0]
    else:  # raised by a driver used directly (the draw lanes' asyncpg and asyncmy)
        cause, code = error, getattr(error, "sqlstate", None)
        if code is None and error.args and isinstance(error.args[0], int):
            code = error.args[0]  # asyncmy's: the MySQL error number first
    if code in _MYSQL_RETRY or code in _POSTGRES_RETRY:
        return Contention(f"the database resolved a lock conflict by dropping this: {cause}")
    return None


class SqlTransaction:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._connection: AsyncConnection | SqliteConnection | None = None
        self._turn: asyncio.Lock | None = None

    async def open(self) -> SqlConnection:
        if self._connection is not None:
            raise RuntimeError("the transaction is open already")
        if self._engine.dialect.name == "sqlite":
            engine = self._engine.sync_engine
            if _sqlite_holders.get(engine) is asyncio.current_task():
                # It would wait for itself forever: a bug in the caller, said plainly.
                raise RuntimeError("a transaction on SQLite opened inside another one")
            self._turn = _sqlite_turns.setdefault(engine, asyncio.Lock())
            await self._turn.acquire()
            if (task := asyncio.current_task()) is not None:
                _sqlite_holders[engine] = task
        try:
            connection = await self._begin()
        except BaseException:
            self._release()
            raise
        self._connection = connection
        return connection

    async def _begin(self) -> AsyncConnection | SqliteConnection:
        if self._turn is not None and sqlite_file(self._engine):
            return await begin_sqlite(self._engine)
        connection = await self._engine.connect()
        try:
            await connection.begin()
        except BaseException:
            await connection.close()
            raise
        return connection

    @property
    def connection(self) -> AsyncConnection | SqliteConnection:
        if self._connection is None:
            raise RuntimeError("the transaction is not open")
        return self._connection

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        try:
            if connection is not None:
                try:
                    await connection.rollback()  # a no-op after commit
                finally:
                    await connection.close()
        finally:
            self._release()

    async def commit(self) -> None:
        if self._connection is None:
            raise RuntimeError("commit() outside the transaction")
        await self._connection.commit()

    def _release(self) -> None:
        turn, self._turn = self._turn, None
        if turn is not None:
            _sqlite_holders.pop(self._engine.sync_engine, None)
            turn.release()


@contextlib.asynccontextmanager
async def transaction(engine: AsyncEngine) -> AsyncIterator[SqlConnection]:
    """`engine.begin()` that takes its turn on SQLite: commits unless the block raises."""
    tx = SqlTransaction(engine)
    connection = await tx.open()
    try:
        yield connection
        await tx.commit()
    finally:
        await tx.close()


class TransactionScope:
    """The body of a SQL unit of work: `async with` opens the transaction and hands its
    connection to `_bind` (which makes the repositories); leaving rolls back unless
    committed, and a deadlock victim leaves as Contention, which callers may retry."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._transaction = SqlTransaction(engine)

    async def __aenter__(self) -> Self:
        self._bind(await self._transaction.open())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._transaction.close()
        if exc is not None and (retry := contention(exc)) is not None:
            raise retry from exc

    async def commit(self) -> None:
        await self._transaction.commit()

    def _bind(self, connection: SqlConnection) -> None:
        raise NotImplementedError
