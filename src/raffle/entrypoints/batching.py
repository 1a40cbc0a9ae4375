"""Messages handled one by one, delivered together: a short wait gathers those in flight."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from raffle.domain.draws import OutboxMessage

Together = Callable[[Sequence[OutboxMessage]], Awaitable[list[Exception | None]]]


class Batcher:
    """`await submit(message)` returns when the message's batch was handled, or raises its
    own failure. A batch goes when it holds `size` messages or `wait` seconds after its first,
    and only while fewer than `concurrency` batches are being handled: otherwise it waits for
    one to finish, growing meanwhile (up to `size`). So a slow database gets fewer, bigger
    batches instead of more transactions at once than the connection pool holds (beyond
    it, every connection would be opened, its statements prepared, and closed again).
    If handling dies (the process is going down), its messages get no answer: unacknowledged,
    the broker gives them to another consumer."""

    def __init__(
        self, together: Together, *, size: int = 400, wait: float = 0.1, concurrency: int = 2
    ) -> None:
        self._together, self._size, self._wait = together, size, wait
        self._concurrency = concurrency
        self._pending: list[tuple[OutboxMessage, asyncio.Future[None]]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._running: set[asyncio.Task[None]] = set()

    async def submit(self, message: OutboxMessage) -> None:
        answer = asyncio.get_running_loop().create_future()
        self._pending.append((message, answer))
        if len(self._pending) >= self._size:
            self._flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._wait, self._flush)
        await answer

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._pending and len(self._running) < self._concurrency:
            batch, self._pending = self._pending[: self._size], self._pending[self._size :]
            task = asyncio.create_task(self._handle(batch))
            self._running.add(task)
            task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        if self._timer is None:  # what waited for a free place goes now
            self._flush()

    async def _handle(self, batch: list[tuple[OutboxMessage, asyncio.Future[None]]]) -> None:
        try:
            outcomes = await self._together([message for message, _ in batch])
        except Exception as error:  # every message of the batch failed: each is retried
            outcomes = [error] * len(batch)
        except BaseException:
            for _, answer in batch:  # no answer: as if the process died here
                answer.cancel()
            raise
        for (_, answer), outcome in zip(batch, outcomes, strict=True):
            if answer.done():
                continue
            if outcome is None:
                answer.set_result(None)
            else:
                answer.set_exception(outcome)
