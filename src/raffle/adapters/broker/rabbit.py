"""RabbitMQ: durable quorum queues, persistent messages, publisher confirms, and a dead-letter
queue per queue after a limit of failed deliveries. aio-pika keeps the connection (and
reconnects it); publishing and consuming run on its aiormq channels directly (see
publish_many and consume), which is why aiormq is pinned."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import cast

import aio_pika
import aiormq
from aio_pika.abc import AbstractChannel
from aio_pika.exceptions import AMQPError
from aiormq.abc import ChannelFrame, DeliveredMessage
from pamqp.common import FieldTable

from raffle.adapters.broker.rabbit_acks import Acks
from raffle.adapters.broker.rabbit_connection import CuttableConnection, finished_within
from raffle.adapters.broker.rabbit_frames import publish_frames
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
        self._connection: CuttableConnection | None = None
        self._publishing: AbstractChannel | None = None
        self._lock = asyncio.Lock()
        self._publisher_lock = asyncio.Lock()

    async def publish(self, message: OutboxMessage) -> None:
        (answer,) = await self.publish_many([message])
        if answer is not None:
            raise answer

    async def publish_many(self, messages: Sequence[OutboxMessage]) -> list[Unavailable | None]:
        """Every message's frames in ONE write, then every confirm awaited under one timeout.

        aiormq writes each `basic_publish` by itself: a system call (and a wake-up of the
        broker) per message, with a task, a timeout and a pass through the channel lock
        each, most of the relay's CPU. Here the batch takes delivery tags under the channel's
        lock as `basic_publish` does, registers a confirmation future per tag (the channel
        answers them: an ack, a nack, a return, or its closing), and queues the bytes of
        all the publishes (packed by rabbit_frames) as one frame. Per message: None once
        the broker acked it, else why not.
        """
        if not messages:
            return []
        deadline = asyncio.get_running_loop().time() + self._timeout  # for all of it
        try:
            async with asyncio.timeout_at(deadline):
                channel = await self._confirming()
                first, confirmations = await _send(channel, messages)
        except NotConfirmed as error:  # no connection
            return [error] * len(messages)
        except (
            AMQPError,
            ConnectionError,
            OSError,
            TimeoutError,
            RuntimeError,
            ValueError,
        ) as error:
            return [NotConfirmed(f"not published: {error!r}")] * len(messages)
        try:
            left = deadline - asyncio.get_running_loop().time()
            await asyncio.wait(confirmations, timeout=max(left, 0.0))
        finally:
            for confirmation in confirmations:
                confirmation.cancel()  # no-op when answered; else no answer in time
            tags = channel.message_id_delivery_tag
            for tag, message in enumerate(messages, first):
                if tags.get(message.message_id) == tag:  # not a later publish of the same id
                    del tags[message.message_id]
        return [_answer(m, c) for m, c in zip(messages, confirmations, strict=True)]

    async def consume(self, queue: str, handle: Handler) -> None:
        """Straight on aiormq's channel: aio-pika's consumer made an `IncomingMessage` and a
        second task per message, a sixth of a consumer's CPU. Its robust channel would not
        restore a consumer it does not know, so when the channel closes (a broker restart)
        this raises, and the worker starts it again on the reconnected connection."""
        connection = await self._connect()
        robust = await connection.channel()
        try:
            channel = cast(aiormq.Channel, await robust.get_underlay_channel())
            await channel.basic_qos(prefetch_count=self._prefetch)
            acks = Acks(channel)

            async def on_message(delivered: DeliveredMessage) -> None:
                tag = acks.received(delivered)
                try:
                    await handle(_message(delivered, queue))
                except Exception:
                    # Returned to the queue: one more failed delivery towards the limit.
                    message_id = delivered.header.properties.message_id
                    log.exception("handling message %s failed", message_id)
                    await channel.basic_reject(tag, requeue=True)
                    acks.settle(tag, handled=False)
                    return
                acks.settle(tag, handled=True)  # acknowledged in a moment, with others

            await channel.basic_consume(queue, on_message)
            await channel.closing  # until cancelled, or raises when the channel is lost
            raise ConnectionError(f"the channel consuming {queue} closed")
        finally:
            await self._close_channel(robust, connection)

    async def close(self) -> None:
        connection, self._connection, self._publishing = self._connection, None, None
        if connection is not None:
            await connection.close_within(self._timeout)

    async def _close_channel(
        self, channel: AbstractChannel, connection: CuttableConnection
    ) -> None:
        """Bounded: a channel's close may go unanswered (a broker, or a link, no longer
        reading this connection), and a stopping worker must not wait for it forever. But
        while the channel lives the broker keeps its unacknowledged messages: unanswered, the
        whole connection goes (its socket cut past the same bound), so the broker gives them
        out again, and the next consume or publish connects afresh rather than on a
        connection that stopped answering."""
        try:
            if await finished_within(self._timeout, channel.close()):
                return
        except Exception:  # failing, not hanging: the channel is gone, nothing is held
            log.debug("closing a consumer's channel failed", exc_info=True)
            return
        log.warning("a consumer's channel did not close in time; dropping its connection")
        if self._connection is connection:
            self._connection, self._publishing = None, None
        await connection.close_within(self._timeout)

    async def _confirming(self) -> aiormq.Channel:
        # One confirming channel for every publish: made once, however many publishes
        # arrive at once (a second channel would replace the first under their feet). Once
        # made, no lock: taking it was a twentieth of the relay's CPU.
        if self._publishing is None:
            async with self._publisher_lock:
                if self._publishing is None:
                    connection = await self._connect()
                    channel = await connection.channel(
                        publisher_confirms=True, on_return_raises=True
                    )
                    await channel.get_exchange(EXCHANGE)  # there, or fail here
                    self._publishing = channel
        # aio-pika reopens the channel after a broker restart: the current one, each time.
        underlay = await self._publishing.get_underlay_channel()
        return cast(aiormq.Channel, underlay)  # its abstract type lacks the confirmations

    async def _connect(self) -> CuttableConnection:
        async with self._lock:
            if self._connection is None:
                try:
                    connection = await aio_pika.connect_robust(
                        self._url, timeout=self._timeout, connection_class=CuttableConnection
                    )
                except (AMQPError, ConnectionError, OSError, TimeoutError) as error:
                    raise NotConfirmed(f"RabbitMQ at {_host(self._url)}: {error!r}") from error
                try:
                    channel = await connection.channel()
                    await self._declare(channel)
                    await channel.close()
                except BaseException:
                    # Failed or cancelled half-way (a worker stopped as it starts): kept
                    # nowhere, the connection would stay open as long as the process.
                    await connection.close_within(self._timeout)
                    raise
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


async def _send(
    channel: aiormq.Channel, messages: Sequence[OutboxMessage]
) -> tuple[int, list[asyncio.Future[object]]]:
    """The first delivery tag, and a confirmation per message in order."""
    number, most = channel.number, channel.max_content_size
    frames = [publish_frames(m, exchange=EXCHANGE, channel=number, most=most) for m in messages]
    confirmations: list[asyncio.Future[object]] = []
    async with channel.lock:  # the delivery tags count the publishes in the order written
        first = channel.delivery_tag + 1
        for tag, message in enumerate(messages, first):
            confirmation: asyncio.Future[object] = channel.create_future()
            channel.confirmations[tag] = confirmation
            # A return names the message by id: the channel finds its confirmation so.
            channel.message_id_delivery_tag[message.message_id] = tag
            confirmations.append(confirmation)
        channel.delivery_tag = first + len(messages) - 1
        try:
            await channel.write_queue.put(ChannelFrame(b"".join(frames), should_close=False))
        except BaseException:
            # Not written: the broker never counted these tags, so neither may we.
            channel.delivery_tag = first - 1
            for tag, (message, confirmation) in enumerate(
                zip(messages, confirmations, strict=True), first
            ):
                channel.confirmations.pop(tag, None)
                channel.message_id_delivery_tag.pop(message.message_id, None)
                confirmation.cancel()
            raise
    return first, confirmations


def _answer(message: OutboxMessage, confirmation: asyncio.Future[object]) -> Unavailable | None:
    """An ack confirms; a nack, a return (mandatory: routed nowhere), the channel lost or no
    answer in time do not, and the outbox row is tried again later."""
    if confirmation.cancelled():
        return NotConfirmed(f"message {message.message_id} not confirmed in time")
    error = confirmation.exception()
    if error is None and isinstance(confirmation.result(), aiormq.spec.Basic.Ack):
        return None
    why = repr(error) if error is not None else repr(confirmation.result())
    return NotConfirmed(f"message {message.message_id} not confirmed: {why}")


def _message(delivered: DeliveredMessage, queue: str) -> OutboxMessage:
    properties = delivered.header.properties
    at = properties.timestamp or datetime.now(UTC)
    # The key rides as the correlation id (a short string: a headers table costs a table's
    # encoding and decoding per message); a relay of before sent it as the header `key`.
    key = properties.correlation_id or str((properties.headers or {}).get("key", ""))
    return OutboxMessage(
        message_id=properties.message_id or "",
        topic=properties.message_type or queue,
        key=key,
        payload=delivered.body.decode(),
        created_at=at if at.tzinfo else at.replace(tzinfo=UTC),
    )


def _host(url: str) -> str:
    """The URL without its credentials, for messages."""
    return url.rpartition("@")[2]
