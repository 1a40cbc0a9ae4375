"""Group commit: what arrives while a batch is in flight goes together in the next batch."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

Together = Callable[[Sequence[T]], Awaitable[Sequence[R | Exception]]]


class GroupCommit(Generic[T, R]):
    """`await submit(item)` returns the item's own answer from `together`, or raises its own
    error. One batch is in flight at a time: with nothing in flight an item goes at once (no
    timer, no added latency at low load); under load the items that arrive meanwhile wait
    and go together, `size` at most. Items of one `key` never share a batch: the later ones
    wait for the next. A batch that raises fails each of its items with that error."""

    def __init__(
        self, together: Together[T, R], *, size: int, key: Callable[[T], Hashable]
    ) -> None:
        self._together, self.size, self._key = together, size, key  # size: settable
        self._waiting: list[tuple[T, asyncio.Future[R]]] = []
        self._running: asyncio.Task[None] | None = None

    async def submit(self, item: T) -> R:
        answer: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, answer))
        if self._running is None:
            self._running = asyncio.create_task(self._run())
        return await answer

    def _next(self) -> list[tuple[T, asyncio.Future[R]]]:
        batch: list[tuple[T, asyncio.Future[R]]] = []
        later: list[tuple[T, asyncio.Future[R]]] = []
        keys: set[Hashable] = set()
        for waiting in self._waiting:
            key = self._key(waiting[0])
            if len(batch) < self.size and key not in keys and not waiting[1].done():
                batch.append(waiting)
                keys.add(key)
            elif not waiting[1].done():  # a caller that gave up leaves no item behind
                later.append(waiting)
        self._waiting = later
        return batch

    async def _run(self) -> None:
        # Taken when the task starts, not when it was made: what arrived in the same turn of
        # the event loop goes along.
        try:
            while batch := self._next():
                await self._answer(batch)
        finally:
            self._running = None

    async def _answer(self, batch: list[tuple[T, asyncio.Future[R]]]) -> None:
        try:
            outcomes: Sequence[R | Exception] = await self._together([i for i, _ in batch])
        except Exception as error:
            outcomes = [error] * len(batch)
        except BaseException:
            for _, answer in batch:  # no answer: the process is going down
                answer.cancel()
            raise
        for (_, answer), outcome in zip(batch, outcomes, strict=True):
            if answer.done():
                continue
            if isinstance(outcome, Exception):
                answer.set_exception(outcome)
            else:
                answer.set_result(outcome)
