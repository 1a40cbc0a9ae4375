"""RabbitMQ through aio-pika: durable quorum queues, persistent messages, publisher confirms,
and a dead-letter queue per queue after a limit of failed deliveries."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import cast

import aio_pika
import aiormq
from aio_pika.abc import (
    AbstractChannel,
    AbstractIncomingMessage,
    AbstractRobustConnection,
)
from aio_pika.exceptions import AMQPError
from pamqp.common import FieldTable

from raffle.domain.draws import OutboxMessage
from raffle.domain.errors import Unavailable
from raffle.service.ports import Handler, dead_letters

log = logging.getLogger(__name__)

EXCHANGE = "raffle"
DEAD_EXCHANGE = "raffle.dead"


class NotConfirmed(Unavailable):
    code = "broker_not_confirmed"


class RabbitBroker:
    """One connection (re-established by aio-pika after a broker restart); a confirming
    channel for publishing and one channel per consumer."""

    def __init__(
        self,
        url: str,
        *,
        topics: Sequence[str],
        attempts: int,
        timeout: float,
        prefetch: int = 800,
    ) -> None:
        self._url = url
        self._topics = tuple(topics)
        self._attempts = attempts
        self._timeout = timeout
        self._prefetch = prefetch
        self._connection: AbstractRobustConnection | None = None
        self._publishing: AbstractChannel | None = None
        self._lock = asyncio.Lock()
        self._publisher_lock = asyncio.Lock()

    async def publish(self, message: OutboxMessage) -> None:
        properties = aiormq.spec.Basic.Properties(
            message_id=message.message_id,
            message_type=message.topic,
            content_type="application/json",
            delivery_mode=aio_pika.DeliveryMode.PERSISTENT.value,
            timestamp=message.created_at,
            headers={"key": message.key},
        )
        try:
            underlay = await (await self._publisher()).get_underlay_channel()
            channel = cast(aiormq.Channel, underlay)  # its abstract type lacks `wait`
            # Straight on aiormq's channel, to pass `wait=False`: aio-pika's publish waits
            # for each frame to be written before the next may be queued, so a relay's batch
            # went out one write (one system call, one loop turn) per message; queued at once,
            # the loop writes them together. The confirm is still awaited: it returns on the
            # broker's ack; a nack, an unroutable return, a lost connection or no answer in
            # time raise, and the outbox row is tried again later.
            confirmed = await channel.basic_publish(
                message.payload.encode(),
                exchange=EXCHANGE,
                routing_key=message.topic,
                properties=properties,
                mandatory=True,
                timeout=self._timeout,
                wait=False,
            )
        except (AMQPError, ConnectionError, OSError, TimeoutError, RuntimeError) as error:
            raise NotConfirmed(f"message {message.message_id} not confirmed: {error!r}") from error
        if not isinstance(confirmed, aiormq.spec.Basic.Ack):
            raise NotConfirmed(f"message {message.message_id} not confirmed: {confirmed!r}")

    async def consume(self, queue: str, handle: Handler) -> None:
        connection = await self._connect()
        channel = await connection.channel()
        await channel.set_qos(prefetch_count=self._prefetch)
        source = await channel.get_queue(queue, ensure=True)

        acks = _Acks()

        async def on_message(incoming: AbstractIncomingMessage) -> None:
            acks.received(incoming)
            try:
                await handle(_message(incoming, queue))
            except Exception:
                # Returned to the queue: one more failed delivery towards the limit.
                log.exception("handling message %s failed", incoming.message_id)
                await incoming.reject(requeue=True)
                acks.settle(incoming, handled=False)
                return
            acks.settle(incoming, handled=True)  # acknowledged in a moment, with others

        tag = await source.consume(on_message)
        try:
            await asyncio.Future()  # until cancelled
        finally:
            with contextlib.suppress(Exception):
                await source.cancel(tag)
            with contextlib.suppress(Exception):
                await channel.close()

    async def close(self) -> None:
        connection, self._connection, self._publishing = self._connection, None, None
        if connection is not None:
            await connection.close()

    async def _publisher(self) -> AbstractChannel:
        # One confirming channel for every publish: made once, however many publishes
        # arrive at once (a second channel would replace the first under their feet). Once
        # made, no lock: taking it was a twentieth of the relay's CPU.
        if self._publishing is not None:
            return self._publishing
        async with self._publisher_lock:
            if self._publishing is None:
                connection = await self._connect()
                channel = await connection.channel(publisher_confirms=True, on_return_raises=True)
                await channel.get_exchange(EXCHANGE)  # there, or fail here
                self._publishing = channel
            return self._publishing

    async def _connect(self) -> AbstractRobustConnection:
        async with self._lock:
            if self._connection is None:
                try:
                    connection = await aio_pika.connect_robust(self._url, timeout=self._timeout)
                except (AMQPError, ConnectionError, OSError, TimeoutError) as error:
                    raise NotConfirmed(f"RabbitMQ at {_host(self._url)}: {error!r}") from error
                channel = await connection.channel()
                await self._declare(channel)
                await channel.close()
                self._connection = connection
        return self._connection

    async def _declare(self, channel: AbstractChannel) -> None:
        """Exchanges and queues, durable; declaring what exists with the same arguments is a
        no-op, so every process declares at connect."""
        live = await channel.declare_exchange(EXCHANGE, aio_pika.ExchangeType.DIRECT, durable=True)
        dead = await channel.declare_exchange(
            DEAD_EXCHANGE, aio_pika.ExchangeType.DIRECT, durable=True
        )
        for topic in self._topics:
            arguments: FieldTable = {
                "x-queue-type": "quorum",
                # Failed deliveries (rejections and consumers lost) beyond the first are
                # counted: the k-th failure dead-letters the message.
                "x-delivery-limit": self._attempts - 1,
                "x-dead-letter-exchange": DEAD_EXCHANGE,
                "x-dead-letter-routing-key": dead_letters(topic),
                # Quorum queues dead-letter at most once unless told otherwise.
                "x-dead-letter-strategy": "at-least-once",
                "x-overflow": "reject-publish",
            }
            queue = await channel.declare_queue(topic, durable=True, arguments=arguments)
            await queue.bind(live, topic)
            parking = await channel.declare_queue(
                dead_letters(topic), durable=True, arguments={"x-queue-type": "quorum"}
            )
            await parking.bind(dead, dead_letters(topic))


class _Acks:
    """Acknowledgements in bulk: one `multiple=True` frame for the messages handled so far,
    instead of a frame each (a frame is a system call; the acks were a third of them).

    A message is still acknowledged only after its handler returned. The frame names the
    newest message handled whose earlier deliveries on the channel are all settled
    (handled, or rejected by a frame of their own, sent first), and goes once the messages
    that finished together have all been seen. Delivery tags count per channel: a channel
    opened again (after a broker restart) starts afresh, and what was open on the old one
    the broker gives out again anyway.
    """

    def __init__(self) -> None:
        self._channel: object = None
        self._open: deque[AbstractIncomingMessage] = deque()  # in the order received
        self._settled: dict[int, bool] = {}  # delivery tag -> handled (True) or rejected
        self._upto: AbstractIncomingMessage | None = None  # set: a frame is due
        self._sending: set[asyncio.Task[None]] = set()

    def received(self, incoming: AbstractIncomingMessage) -> None:
        if incoming.channel is not self._channel:
            self._channel, self._open, self._settled = incoming.channel, deque(), {}
            self._upto = None
        self._open.append(incoming)

    def settle(self, incoming: AbstractIncomingMessage, *, handled: bool) -> None:
        if incoming.channel is not self._channel:
            return
        self._settled[incoming.delivery_tag or 0] = handled
        due = self._upto is not None
        while self._open and (self._open[0].delivery_tag or 0) in self._settled:
            first = self._open.popleft()
            if self._settled.pop(first.delivery_tag or 0):
                self._upto = first
        if self._upto is not None and not due:
            # After the other handlers that finished with this one have run.
            asyncio.get_running_loop().call_soon(self._send)

    def _send(self) -> None:
        upto, self._upto = self._upto, None
        if upto is not None and upto.channel is self._channel:
            task = asyncio.create_task(self._ack(upto))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    @staticmethod
    async def _ack(upto: AbstractIncomingMessage) -> None:
        try:
            await upto.ack(multiple=True)
        except Exception:  # the channel is gone: its messages are given out again
            log.warning("acknowledging up to message %s failed", upto.message_id, exc_info=True)


def _message(incoming: AbstractIncomingMessage, queue: str) -> OutboxMessage:
    headers = incoming.headers or {}
    at = incoming.timestamp or datetime.now(UTC)
    return OutboxMessage(
        message_id=incoming.message_id or "",
        topic=incoming.type or queue,
        key=str(headers.get("key", "")),
        payload=incoming.body.decode(),
        created_at=at if at.tzinfo else at.replace(tzinfo=UTC),
    )


def _host(url: str) -> str:
    """The URL without its credentials, for messages."""
    return url.rpartition("@")[2]
