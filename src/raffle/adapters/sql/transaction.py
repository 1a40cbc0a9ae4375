"""One connection, one transaction: rolled back unless committed, always closed.

On SQLite every transaction of a process takes turns behind one asyncio lock and starts
with BEGIN IMMEDIATE. SQLite has one writer at a time anyway; waiting on a lock in the
event loop is cheaper than its busy handler's sleeps, and a transaction that read first
can no longer fail with "database is locked" when it then writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator

from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

_sqlite_turns: weakref.WeakKeyDictionary[Engine, asyncio.Lock] = weakref.WeakKeyDictionary()


class SqlTransaction:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._connection: AsyncConnection | None = None
        self._turn: asyncio.Lock | None = None

    async def open(self) -> AsyncConnection:
        if self._connection is not None:
            raise RuntimeError("the transaction is open already")
        if self._engine.dialect.name == "sqlite":
            self._turn = _sqlite_turns.setdefault(self._engine.sync_engine, asyncio.Lock())
            await self._turn.acquire()
        try:
            connection = await self._engine.connect()
            try:
                await connection.begin()
            except BaseException:
                await connection.close()
                raise
        except BaseException:
            self._release()
            raise
        self._connection = connection
        return connection

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
            turn.release()


@contextlib.asynccontextmanager
async def transaction(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """`engine.begin()` that takes its turn on SQLite: commits unless the block raises."""
    tx = SqlTransaction(engine)
    connection = await tx.open()
    try:
        yield connection
        await tx.commit()
    finally:
        await tx.close()
