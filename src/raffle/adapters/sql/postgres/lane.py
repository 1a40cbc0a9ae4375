"""The connections of draws in batches on PostgreSQL (postgres/draw_batch): asyncpg's own, kept
open by each lane between its batches, with BEGIN and COMMIT sent on them directly.
"""

from __future__ import annotations

import contextlib
from functools import partial
from types import TracebackType
from typing import Any, Self

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.lanes import KEEP, IdleConnections
from raffle.adapters.sql.transaction import contention

CLOSE_TIMEOUT_SECONDS = 5.0
# SQLAlchemy's own connect arguments, not asyncpg's.
_NOT_ASYNCPG = ("prepared_statement_cache_size", "prepared_statement_name_func", "async_creator_fn")


class LaneConnections(IdleConnections[Any]):
    """asyncpg connections to one database, made with the engine's URL and arguments."""

    def __init__(self, engine: AsyncEngine, *, keep: int = KEEP) -> None:
        args, kwargs = engine.dialect.create_connect_args(engine.url)
        for name in _NOT_ASYNCPG:
            kwargs.pop(name, None)
        connect = partial(asyncpg.connect, *args, **kwargs)
        super().__init__(
            engine, connect, asyncpg.Connection.is_closed, asyncpg.Connection.terminate, keep=keep
        )

    async def release(self, connection: Any, *, reusable: bool) -> None:
        """Back for the next batch; closed if not `reusable` (its state unknown: a statement
        cut short, a lost connection) or if enough are idle."""
        if not reusable or connection.is_closed():
            connection.terminate()
        elif not self.kept(connection):
            await _close(connection)

    async def close(self) -> None:
        """Close the idle connections; those of batches in flight close when they end."""
        for connection in self.closing():
            await _close(connection)


async def _close(connection: Any) -> None:
    try:
        await connection.close(timeout=CLOSE_TIMEOUT_SECONDS)
    except Exception:
        connection.terminate()


class LaneTransaction:
    """One transaction on a lane's connection: `async with` begins it, leaving rolls it back
    unless committed, and a deadlock victim leaves as Contention (see TransactionScope)."""

    def __init__(self, lane: LaneConnections) -> None:
        self._lane = lane
        self._raw: Any = None
        self._committed = False

    async def __aenter__(self) -> Self:
        if self._raw is not None:
            raise RuntimeError("the transaction is open already")
        connection = await self._lane.acquire()
        try:
            await connection.execute("BEGIN")
        except BaseException:
            await self._lane.release(connection, reusable=False)
            raise
        self._raw, self._committed = connection, False
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._lane.failed += exc is not None
        connection, self._raw = self._raw, None
        if connection is not None:
            reusable = False
            try:
                reusable = await _ended(connection, self._committed)
            finally:  # cancelled too: the connection goes
                await self._lane.release(connection, reusable=reusable)
        if exc is not None and (retry := contention(exc)) is not None:
            raise retry from exc

    @property
    def raw(self) -> Any:
        """The asyncpg connection, in the transaction."""
        if self._raw is None:
            raise RuntimeError("the transaction is not open")
        return self._raw

    async def commit(self) -> None:
        await self.raw.execute("COMMIT")
        self._committed = True


async def _ended(connection: Any, committed: bool) -> bool:
    """Roll back unless committed; whether the connection is fit for another transaction."""
    if committed:
        return True
    with contextlib.suppress(Exception):
        # After a failed statement (or COMMIT) this ends the aborted transaction; on a
        # connection cut short mid-statement or lost it raises: the connection goes.
        await connection.execute("ROLLBACK")
        return True
    return False
