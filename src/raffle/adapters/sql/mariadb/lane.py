"""The connections of draws in batches on MariaDB (mariadb/draw_batch): asyncmy's own, kept
open by each lane between its batches, each batch's statements sent together.

A batch's steps are few and each is known whole before it is sent: its BEGIN goes with its
first statements and its COMMIT with its last (the client's MULTI_STATEMENTS flag), so that
a batch costs two or three round trips whatever its size. Through SQLAlchemy's pool every
statement was a round trip of its own, and a checkout, a BEGIN and a reset besides.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from functools import partial
from types import TracebackType
from typing import Any, Self

import asyncmy
from asyncmy.constants import CLIENT
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.lanes import KEEP, IdleConnections
from raffle.adapters.sql.transaction import contention

# As the engine's own (unit_of_work.create_engine): a batch locks the rows it reads and no
# gaps, so that batches lock accounts in their one order only (see mariadb/draw_batch).
_SESSION = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"

Statement = tuple[str, Sequence[Any]]  # SQL with %s placeholders, and its values


class LaneConnections(IdleConnections[Any]):
    """asyncmy connections to one database, made with the engine's URL and arguments."""

    def __init__(self, engine: AsyncEngine, *, keep: int = KEEP) -> None:
        args, kwargs = engine.dialect.create_connect_args(engine.url)
        kwargs["client_flag"] = kwargs.get("client_flag", 0) | CLIENT.MULTI_STATEMENTS
        kwargs.update(init_command=_SESSION, autocommit=True)
        connect = partial(asyncmy.connect, *args, **kwargs)
        super().__init__(engine, connect, _is_closed, asyncmy.Connection.close, keep=keep)

    def release(self, connection: Any, *, reusable: bool) -> None:
        """Back for the next batch; closed if not `reusable` (its state unknown: a statement
        cut short, a lost connection) or if enough are idle."""
        if not reusable or not self.kept(connection):
            connection.close()

    async def close(self) -> None:
        """Close the idle connections; those of batches in flight close when they end."""
        self.drop()


def _is_closed(connection: Any) -> bool:
    return not connection.connected


class LaneTransaction:
    """One transaction on a lane's connection: `async with` takes the connection, `send`
    begins the transaction with its first statements, `finish` commits it with its last;
    leaving rolls it back unless committed."""

    def __init__(self, lane: LaneConnections) -> None:
        self._lane = lane
        self._raw: Any = None
        self._begun = self._committed = False

    async def __aenter__(self) -> Self:
        if self._raw is not None:
            raise RuntimeError("the transaction is open already")
        self._raw = await self._lane.acquire()
        self._begun = self._committed = False
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._lane.failed += exc is not None
        connection, self._raw = self._raw, None
        if connection is None:
            return
        reusable = False
        try:
            # Cut short (cancelled), a statement's answer may be half read: the connection
            # goes, and the server rolls its transaction back.
            if exc is None or isinstance(exc, Exception):
                reusable = await _ended(connection, self._begun and not self._committed)
        finally:  # cancelled too: the connection goes
            self._lane.release(connection, reusable=reusable)
        if exc is not None and (retry := contention(exc)) is not None:
            raise retry from exc  # a deadlock victim, rolled back whole: callers run it again

    async def send(self, statements: Sequence[Statement]) -> list[tuple[Any, ...]]:
        """Run `statements` in one round trip, in the transaction (begun with the first):
        each one's rows, in order."""
        if self._raw is None:
            raise RuntimeError("the transaction is not open")
        if self._begun:
            return await _run(self._raw, statements)
        self._begun = True
        return (await _run(self._raw, [("BEGIN", ()), *statements]))[1:]

    async def finish(self, statements: Sequence[Statement]) -> None:
        """Run `statements` and commit, in one round trip."""
        await self.send([*statements, ("COMMIT", ())])
        self._committed = True


async def _run(connection: Any, statements: Sequence[Statement]) -> list[tuple[Any, ...]]:
    sql = ";\n".join(text for text, _ in statements)
    values = [value for _, line in statements for value in line]
    found: list[tuple[Any, ...]] = []
    async with connection.cursor() as cursor:
        await cursor.execute(sql, values or None)
        found.append(tuple(await cursor.fetchall() or ()))
        # The server stops at a statement that fails; its error is raised here.
        while await cursor.nextset():
            found.append(tuple(await cursor.fetchall() or ()))
    return found


async def _ended(connection: Any, roll_back: bool) -> bool:
    """Roll back if begun and not committed; whether the connection is fit for another
    transaction."""
    if not roll_back:
        return connection.connected  # type: ignore[no-any-return]
    with contextlib.suppress(Exception):
        # On a connection cut short mid-statement, or lost, this raises: the connection goes.
        async with connection.cursor() as cursor:
            await cursor.execute("ROLLBACK")
        return True
    return False
