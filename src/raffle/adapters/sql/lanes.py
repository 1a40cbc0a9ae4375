"""What the batched draw stores (postgres/, mariadb/, sqlite/) share: a lane per shard
database; the client-server ones keep their own driver connections between batches."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Generic, Protocol, TypeVar

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.shards import route
from raffle.service.ports import Claim

KEEP = 2  # idle connections a lane keeps; more are closed when their batch ends

C = TypeVar("C")  # a driver's connection


class IdleConnections(Generic[C]):
    """A lane's driver connections to one database between its batches, made by `connect`: a
    few kept idle, those the server ended meanwhile (`is_closed`) passed over, and gone with
    the engine: disposing of it drops (`drop`) those left idle if the lane was not closed
    first. The backend's lane says when a connection is fit to keep and how it closes."""

    def __init__(
        self,
        engine: AsyncEngine,
        connect: Callable[[], Awaitable[C]],
        is_closed: Callable[[C], object],
        drop: Callable[[C], object],
        *,
        keep: int = KEEP,
    ) -> None:
        self._connect = connect
        self._is_closed = is_closed
        self._drop = drop
        self._keep = keep
        self._idle: list[C] = []
        self._closed = False
        self.failed = 0  # transactions on these connections rolled back on an error
        event.listen(engine.sync_engine, "engine_disposed", lambda _engine: self.drop())

    async def acquire(self) -> C:
        if self._closed:
            raise RuntimeError("the lane's connections are closed")
        while self._idle:
            connection = self._idle.pop()
            if not self._is_closed(connection):  # the server may have ended it meanwhile
                return connection
        return await self._connect()

    def kept(self, connection: C) -> bool:
        """Keep `connection` for the next batch unless the lane is closed or enough are idle;
        whether it was kept (if not, the caller closes it)."""
        if self._closed or len(self._idle) >= self._keep:
            return False
        self._idle.append(connection)
        return True

    def closing(self) -> list[C]:
        """Take no more connections; the idle ones, for the caller to close. Those of batches
        in flight close when they end."""
        self._closed = True
        idle, self._idle = self._idle, []
        return idle

    def drop(self) -> None:
        for connection in self.closing():
            self._drop(connection)


class Lane(Protocol):
    failed: int

    async def close(self) -> None: ...


L = TypeVar("L", bound=Lane)
B = TypeVar("B")  # the backend's batch


class DrawLanes(Generic[L, B]):
    """A lane per shard database, with its own connections (`lane` of its engine); a batch
    (`batch` of a lane's connections and these lanes) begun on one at a time."""

    def __init__(
        self,
        engines: Sequence[AsyncEngine],
        tables: int,
        size: int,
        lane: Callable[[AsyncEngine], L],
        batch: Callable[[L, Any], B],
    ) -> None:
        self._connections = tuple(lane(engine) for engine in engines)
        self._batch = batch
        self.tables = tables  # shard tables per database
        self.size = size
        self.sizes: Counter[int] = Counter()

    def lane(self, user_id: str) -> int:
        return route(user_id, len(self._connections), self.tables)[0]

    def begin(self, lane: int) -> B:
        return self._batch(self._connections[lane], self)

    async def close(self) -> None:
        for connections in self._connections:
            await connections.close()

    def table(self, user_id: str) -> int:
        return route(user_id, len(self._connections), self.tables)[1]

    @property
    def failed(self) -> int:
        return sum(connections.failed for connections in self._connections)


def by_table(
    claims: Sequence[Claim], table: Callable[[str], int], draws: Iterable[int]
) -> dict[int, list[int]]:
    """The draws (indexes in `claims`) by shard table, in the order every batch locks rows
    in: by table, and in a table by user."""
    tables: dict[int, list[int]] = {}
    for n in sorted(draws, key=lambda n: claims[n][0]):
        tables.setdefault(table(claims[n][0]), []).append(n)
    return dict(sorted(tables.items()))
