"""A consumer's acknowledgements to RabbitMQ, in bulk."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import cast

import aiormq
from aiormq.abc import DeliveredMessage

log = logging.getLogger(__name__)


class Acks:
    """Acknowledgements in bulk: one `multiple=True` frame for the messages handled so far,
    instead of a frame each (a frame is a system call; the acks were a third of them).

    A message is still acknowledged only after its handler returned. The frame names the
    newest message handled whose earlier deliveries on the channel are all settled
    (handled, or rejected by a frame of their own, sent first), and goes once the messages
    that finished together have all been seen. Delivery tags count per channel: a channel
    opened again (after a broker restart) gets a new `Acks`, and what was open on the old
    one the broker gives out again anyway.
    """

    def __init__(self, channel: aiormq.Channel) -> None:
        self._channel = channel
        self._open: deque[int] = deque()  # delivery tags in the order received
        self._settled: dict[int, bool] = {}  # delivery tag -> handled (True) or rejected
        self._upto: int | None = None  # set: a frame is due
        self._sending: set[asyncio.Task[None]] = set()

    def received(self, delivered: DeliveredMessage) -> int:
        tag = cast(aiormq.spec.Basic.Deliver, delivered.delivery).delivery_tag or 0
        self._open.append(tag)
        return tag

    def settle(self, tag: int, *, handled: bool) -> None:
        self._settled[tag] = handled
        due = self._upto is not None
        while self._open and self._open[0] in self._settled:
            first = self._open.popleft()
            if self._settled.pop(first):
                self._upto = first
        if self._upto is not None and not due:
            # After the other handlers that finished with this one have run.
            asyncio.get_running_loop().call_soon(self._send)

    def _send(self) -> None:
        upto, self._upto = self._upto, None
        if upto is not None:
            task = asyncio.create_task(self._ack(upto))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _ack(self, upto: int) -> None:
        try:
            await self._channel.basic_ack(upto, multiple=True, wait=False)
        except Exception:  # the channel is gone: its messages are given out again
            log.warning("acknowledging up to delivery %s failed", upto, exc_info=True)
