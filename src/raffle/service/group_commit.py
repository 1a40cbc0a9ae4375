"""Group commit: what arrives while a batch is in flight goes together in the next batch."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

Together = Callable[[Sequence[T]], Awaitable[Sequence[R | Exception]]]
Waiting = tuple[T, asyncio.Future[R]]


class GroupCommit(Generic[T, R]):
    """`await submit(item)` returns the item's own answer from `together`, or raises its own
    error. Up to `flights` batches are in flight at a time: with a flight free an item goes
    at once (no timer, no added latency at low load); under load the items that arrive
    meanwhile wait and go together, `size` at most, as soon as a flight is free. Items of
    one `key` never share a batch, nor are in two batches in flight at once: the later ones
    wait for the earlier one's batch to finish, in the order they came. A batch that raises
    fails each of its items with that error."""

    def __init__(
        self,
        together: Together[T, R],
        *,
        size: int,
        key: Callable[[T], Hashable],
        flights: int = 1,
    ) -> None:
        self._together, self._size, self._key, self._flights = together, size, key, flights
        self._waiting: list[Waiting[T, R]] = []
        self._flying: set[Hashable] = set()  # the keys of the batches in flight
        self._running = 0  # tasks taking batches
        self._tasks: set[asyncio.Task[None]] = set()  # held: the loop keeps only weak ones

    async def submit(self, item: T) -> R:
        answer: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, answer))
        if self._running < self._flights:
            self._running += 1
            task = asyncio.create_task(self._run())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return await answer

    def _next(self) -> list[Waiting[T, R]]:
        batch: list[Waiting[T, R]] = []
        later: list[Waiting[T, R]] = []
        keys: set[Hashable] = set()
        for waiting in self._waiting:
            if waiting[1].done():  # a caller that gave up leaves no item behind
                continue
            key = self._key(waiting[0])
            if len(batch) < self._size and key not in keys and key not in self._flying:
                batch.append(waiting)
                keys.add(key)
            else:
                keys.add(key)  # its later items wait behind it, in order
                later.append(waiting)
        self._waiting = later
        self._flying |= {self._key(item) for item, _ in batch}
        return batch

    async def _run(self) -> None:
        # Taken when the task starts, not when it was made: what arrived in the same turn of
        # the event loop goes along. A task stops when nothing it may take is left: what
        # waits then has its key in another batch in flight, whose task takes it next.
        # Counted down here, not in a done callback: one that ran later would let an item
        # arrive meanwhile, find every flight taken, and wait for a task that has ended.
        try:
            while batch := self._next():
                try:
                    await self._answer(batch)
                finally:
                    self._flying -= {self._key(item) for item, _ in batch}
        finally:
            self._running -= 1

    async def _answer(self, batch: list[Waiting[T, R]]) -> None:
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
