"""The embedded broker: queues in process memory, for a single process."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from raffle.domain.draws import OutboxMessage
from raffle.domain.errors import Unavailable
from raffle.service.ports import Handler, dead_letters
from raffle.service.stopping import stop_if_asked

log = logging.getLogger(__name__)


class NotConfirmed(Unavailable):
    code = "broker_not_confirmed"


@dataclass(eq=False)
class _Item:
    message: OutboxMessage
    handled: asyncio.Future[None]
    failures: int = field(default=0)


class MemoryBroker:
    """Nothing in memory outlives the process, so a publish is confirmed only once the
    message was handled (acknowledged, or dead-lettered after `attempts` failures and then
    handled there): until then its outbox row is not `published`, and the relay or the
    compensation job sends it again after a crash."""

    def __init__(self, *, attempts: int, timeout: float, concurrency: int = 8) -> None:
        self._attempts = attempts
        self._timeout = timeout
        self._concurrency = concurrency
        self._queues: defaultdict[str, asyncio.Queue[_Item]] = defaultdict(asyncio.Queue)

    async def publish(self, message: OutboxMessage) -> None:
        item = _Item(message, asyncio.get_running_loop().create_future())
        self._queues[message.topic].put_nowait(item)
        try:
            await asyncio.wait_for(asyncio.shield(item.handled), self._timeout)
        except TimeoutError:
            raise NotConfirmed(f"message {message.message_id} not handled in time") from None

    async def publish_many(self, messages: Sequence[OutboxMessage]) -> list[Unavailable | None]:
        answers = await asyncio.gather(*map(self.publish, messages), return_exceptions=True)
        return [
            a if a is None or isinstance(a, Unavailable) else NotConfirmed(repr(a)) for a in answers
        ]

    async def consume(self, queue: str, handle: Handler) -> None:
        async with asyncio.TaskGroup() as group:
            for _ in range(self._concurrency):
                group.create_task(self._work(queue, handle))

    async def _work(self, queue: str, handle: Handler) -> None:
        waiting = self._queues[queue]
        while True:
            item = await waiting.get()
            try:
                await handle(item.message)
            except Exception:
                stop_if_asked()
                log.exception("handling message %s failed", item.message.message_id)
                item.failures += 1
                if item.failures >= self._attempts:
                    self._queues[dead_letters(queue)].put_nowait(item)
                else:
                    waiting.put_nowait(item)
                continue
            with contextlib.suppress(asyncio.InvalidStateError):
                item.handled.set_result(None)

    async def close(self) -> None:
        self._queues.clear()
