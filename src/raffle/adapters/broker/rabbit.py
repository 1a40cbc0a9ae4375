"""RabbitMQ: durable quorum queues, persistent messages, publisher confirms, and a dead-letter
queue per queue after a limit of failed deliveries. aio-pika keeps the connection (and
reconnects it); publishing and consuming run on its aiormq channels, through their public
methods (see publish_many and consume)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import cast

import aio_pika
import aiormq
from aio_pika.abc import AbstractChannel, AbstractRobustChannel, AbstractRobustConnection
from aio_pika.exceptions import AMQPError
from aiormq.abc import DeliveredMessage
from pamqp.common import FieldTable

from raffle.adapters.broker.rabbit_acks import Acks
from raffle.adapters.broker.rabbit_connection import close_within, connect, finished_within
from raffle.domain.draws import OutboxMessage
from raffle.domain.errors import Unavailable
from raffle.service.ports import Handler, dead_letters

log = logging.getLogger(__name__)

EXCHANGE = "raffle"
DEAD_EXCHANGE = "raffle.dead"
PERSISTENT = aio_pika.DeliveryMode.PERSISTENT.value


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
        in_order: Collection[str] = (),
        bounds: Mapping[str, int] | None = None,
    ) -> None:
        self._url = url
        self._topics = tuple(topics)
        self._in_order = frozenset(in_order)  # topics with a single active consumer
        self._attempts = attempts
        self._timeout = timeout
        self._prefetch = prefetch
        self._bounds = dict(bounds or {})  # a topic's queue length; past it publishes are nacked
        self._connection: AbstractRobustConnection | None = None
        self._publishing: AbstractRobustChannel | None = None
        self._lock = asyncio.Lock()
        self._publisher_lock = asyncio.Lock()

    async def publish(self, message: OutboxMessage) -> None:
        (answer,) = await self.publish_many([message])
        if answer is not None:
            raise answer

    async def publish_many(self, messages: Sequence[OutboxMessage]) -> list[Unavailable | None]:
        """Every message published at once, their confirmations awaited together under one
        timeout, so a batch waits about one round trip. Per message: None once the broker
        acked it, else why not."""
        if not messages:
            return []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._timeout  # for all of it
        try:
            async with asyncio.timeout_at(deadline):
                channel = await self._confirming()
        except NotConfirmed as error:  # no connection
            return [error] * len(messages)
        except (AMQPError, ConnectionError, OSError, TimeoutError, RuntimeError) as error:
            return [NotConfirmed(f"not published: {error!r}")] * len(messages)
        publishes = [asyncio.ensure_future(_publish(channel, m)) for m in messages]
        try:
            await asyncio.wait(publishes, timeout=max(deadline - loop.time(), 0.0))
        finally:
            unanswered = [p for p in publishes if p.cancel()]  # no answer in time
        if unanswered:
            await asyncio.wait(unanswered)  # ended, so that each is answered "not in time"
        return [_answer(m, p) for m, p in zip(messages, publishes, strict=True)]

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

    async def ready(self) -> None:
        """Return once a publish could go out now: connected, the publishing channel open
        (waits while aio-pika reconnects; the caller bounds the wait)."""
        await self._confirming()

    async def close(self) -> None:
        connection, self._connection, self._publishing = self._connection, None, None
        if connection is not None:
            await close_within(connection, self._timeout)

    async def _close_channel(
        self, channel: AbstractChannel, connection: AbstractRobustConnection
    ) -> None:
        """Bounded: a channel's close may go unanswered (a broker, or a link, no longer
        reading this connection), and a stopping worker must not wait for it forever. But
        while the channel lives the broker keeps its unacknowledged messages: unanswered, the
        whole connection goes (closed, or left closing until the heartbeats give it up), so
        the broker gives them out again, and the next consume or publish connects afresh
        rather than on a connection that stopped answering."""
        try:
            if await finished_within(self._timeout, channel.close()):
                return
        except Exception:  # failing, not hanging: the channel is gone, nothing is held
            log.debug("closing a consumer's channel failed", exc_info=True)
            return
        log.warning("a consumer's channel did not close in time; dropping its connection")
        if self._connection is connection:
            self._connection, self._publishing = None, None
        await close_within(connection, self._timeout)

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
        # aio-pika reopens the channel after a broker restart, or after the broker closed
        # it (as on a message past its size limit): once it has, the current one.
        await self._publishing.ready()
        underlay = await self._publishing.get_underlay_channel()
        return cast(aiormq.Channel, underlay)  # its abstract type lacks publish's `wait`

    async def _connect(self) -> AbstractRobustConnection:
        async with self._lock:
            if self._connection is None:
                try:
                    connection = await connect(self._url, bound=self._timeout)
                except (AMQPError, ConnectionError, OSError, TimeoutError) as error:
                    raise NotConfirmed(f"RabbitMQ at {_host(self._url)}: {error!r}") from error
                try:
                    channel = await connection.channel()
                    await self._declare(channel)
                    await channel.close()
                except BaseException:
                    # Failed or cancelled half-way (a worker stopped as it starts): kept
                    # nowhere, the connection would stay open as long as the process.
                    await close_within(connection, self._timeout)
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
            if topic in self._in_order:
                # One consumer at a time gets the queue's messages, in the queue's order; the
                # next takes over when it goes.
                arguments["x-single-active-consumer"] = True
            if (bound := self._bounds.get(topic)) is not None:
                arguments["x-max-length"] = bound
            queue = await channel.declare_queue(topic, durable=True, arguments=arguments)
            await queue.bind(live, topic)
            parking = await channel.declare_queue(
                dead_letters(topic), durable=True, arguments={"x-queue-type": "quorum"}
            )
            await parking.bind(dead, dead_letters(topic))


async def _publish(channel: aiormq.Channel, message: OutboxMessage) -> object:
    """The broker's answer to publishing `message`, mandatory and persistent: an ack, or an
    error (a nack, a return: routed nowhere, or the channel closed, as on a message past
    the broker's size limit)."""
    properties = aiormq.spec.Basic.Properties(
        content_type="application/json",
        delivery_mode=PERSISTENT,
        correlation_id=message.key,
        message_id=message.message_id,
        timestamp=message.created_at,  # pamqp takes a naive time for UTC, as we do
        message_type=message.topic,
    )
    return await channel.basic_publish(
        message.payload.encode(),
        exchange=EXCHANGE,
        routing_key=message.topic,
        properties=properties,
        mandatory=True,
        wait=False,  # the confirmation says it was written; no wait for each write alone
    )


def _answer(message: OutboxMessage, publish: asyncio.Future[object]) -> Unavailable | None:
    """An ack confirms; anything else (see _publish), or no answer in time, does not, and
    the outbox row is tried again later."""
    if publish.cancelled():
        return NotConfirmed(f"message {message.message_id} not confirmed in time")
    error = publish.exception()
    if error is None and isinstance(publish.result(), aiormq.spec.Basic.Ack):
        return None
    why = repr(error) if error is not None else repr(publish.result())
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
