"""Consumers acknowledge in bulk (one multiple=True frame for many messages): against a real
RabbitMQ, every message handled is acknowledged, and a rejected one in between is given
out again and not swept up by the acknowledgement of the messages after it; one never
acknowledged is given out again even when its consumer's channel will not close."""

from __future__ import annotations

import asyncio
import random
import uuid
from datetime import UTC, datetime

import aio_pika
import pytest

from raffle.adapters.broker.rabbit import NotConfirmed, RabbitBroker
from raffle.domain.draws import OutboxMessage
from raffle.service.ports import dead_letters
from tests.integration.relay import Relay

MESSAGES = 300


async def _ready(url: str, queue: str) -> int:
    connection = await aio_pika.connect(url)
    async with connection:
        channel = await connection.channel()
        declared = await channel.declare_queue(queue, passive=True)
        return declared.declaration_result.message_count or 0


async def _delete(url: str, *queues: str) -> None:
    connection = await aio_pika.connect(url)
    async with connection:
        channel = await connection.channel()
        for queue in queues:
            await channel.queue_delete(queue)


async def test_handled_messages_are_acknowledged_and_a_rejected_one_comes_back(
    rabbitmq_url: str,
) -> None:
    topic = f"acks.{uuid.uuid4().hex[:8]}"
    broker = RabbitBroker(rabbitmq_url, topics=[topic], attempts=5, timeout=10)
    now = datetime.now(UTC)
    sent = [OutboxMessage(f"m{n:04d}", topic, f"k{n}", "{}", now) for n in range(MESSAGES)]
    refused = {"m0007", "m0150"}  # refused on their first delivery only
    handled: list[str] = []
    everything = asyncio.Event()

    async def handle(message: OutboxMessage) -> None:
        await asyncio.sleep(random.random() / 100)  # finishing out of order
        if message.message_id in refused:
            refused.discard(message.message_id)
            raise RuntimeError("refused once")
        handled.append(message.message_id)
        if len(handled) == MESSAGES:
            everything.set()

    try:
        await asyncio.gather(*(broker.publish(m) for m in sent))
        consumer = asyncio.create_task(broker.consume(topic, handle))
        await asyncio.wait_for(everything.wait(), 60)
        await asyncio.sleep(0.5)  # the last acknowledgement frame goes in a moment
        consumer.cancel()
        await asyncio.gather(consumer, return_exceptions=True)
        await broker.close()  # anything not acknowledged would now be back in the queue

        assert sorted(handled) == [m.message_id for m in sent]  # each once, the two included
        assert await _ready(rabbitmq_url, topic) == 0
        assert await _ready(rabbitmq_url, dead_letters(topic)) == 0
    finally:
        await broker.close()
        await _delete(rabbitmq_url, topic, dead_letters(topic))


async def test_a_publish_nobody_can_route_is_not_confirmed_and_a_routed_one_arrives_whole(
    rabbitmq_url: str,
) -> None:
    """Publishes go straight on aiormq's channel (rabbit.py): a return is still a failure,
    and what arrives carries the id, the topic, the key, the payload and the time sent."""
    topic = f"routes.{uuid.uuid4().hex[:8]}"
    broker = RabbitBroker(rabbitmq_url, topics=[topic], attempts=5, timeout=10)
    at = datetime(2026, 11, 22, 3, 4, 5, tzinfo=UTC)
    arrived: asyncio.Queue[OutboxMessage] = asyncio.Queue()

    async def handle(message: OutboxMessage) -> None:
        await arrived.put(message)

    try:
        with pytest.raises(NotConfirmed):
            await broker.publish(OutboxMessage("m-nowhere", "no.such.queue", "k0", "{}", at))
        sent = OutboxMessage("m-routed", topic, "order-1", '{"n": 1}', at)
        await broker.publish(sent)
        consumer = asyncio.create_task(broker.consume(topic, handle))
        assert await asyncio.wait_for(arrived.get(), 30) == sent
        consumer.cancel()
        await asyncio.gather(consumer, return_exceptions=True)
    finally:
        await broker.close()
        await _delete(rabbitmq_url, topic, dead_letters(topic))


async def test_a_batch_published_in_one_write_is_confirmed_message_by_message(
    rabbitmq_url: str,
) -> None:
    """`publish_many` publishes a batch at once and answers per message: the
    unroutable ones in the middle are not confirmed, every other one arrives once and whole
    (one bigger than a frame too), and the channel's delivery tags stay in step with the
    broker's: single publishes after the batch are confirmed."""
    topic = f"batch.{uuid.uuid4().hex[:8]}"
    broker = RabbitBroker(rabbitmq_url, topics=[topic], attempts=5, timeout=10)
    at = datetime(2026, 11, 22, 5, 6, 7, tzinfo=UTC)
    big = '{"pad": "' + "x" * 300_000 + '"}'  # frame_max is 128 KiB: split over frames
    batch = [
        OutboxMessage(f"b{n:04d}", topic, f"k{n}", big if n == 7 else f'{{"n": {n}}}', at)
        for n in range(MESSAGES)
    ]
    nowhere = {3, 150, 299}
    for n in nowhere:
        batch[n] = OutboxMessage(f"b{n:04d}", "no.such.queue", f"k{n}", "{}", at)
    arrived: list[OutboxMessage] = []
    everything = asyncio.Event()
    expected = MESSAGES - len(nowhere) + 1

    async def handle(message: OutboxMessage) -> None:
        arrived.append(message)
        if len(arrived) == expected:
            everything.set()

    try:
        answers = await broker.publish_many(batch)
        assert [n for n, a in enumerate(answers) if a is not None] == sorted(nowhere)
        assert all(isinstance(answers[n], NotConfirmed) for n in nowhere)
        after = OutboxMessage("after", topic, "k-after", "{}", at)
        await broker.publish(after)  # tags in step: confirmed, not mistaken for another
        consumer = asyncio.create_task(broker.consume(topic, handle))
        await asyncio.wait_for(everything.wait(), 60)
        await asyncio.sleep(0.3)  # nothing more comes
        consumer.cancel()
        await asyncio.gather(consumer, return_exceptions=True)
        routed = [m for n, m in enumerate(batch) if n not in nowhere]
        assert arrived == [*routed, after]  # once each, whole, in order
        assert await broker.publish_many([]) == []
    finally:
        await broker.close()
        await _delete(rabbitmq_url, topic, dead_letters(topic))


async def test_a_message_of_a_relay_of_before_keeps_its_key(rabbitmq_url: str) -> None:
    """Relays before this one sent the key as the header `key` (now: the correlation id);
    messages of theirs still in the queue arrive with their key."""
    topic = f"older.{uuid.uuid4().hex[:8]}"
    broker = RabbitBroker(rabbitmq_url, topics=[topic], attempts=5, timeout=10)
    at = datetime(2026, 11, 22, 5, 6, 7, tzinfo=UTC)
    arrived: asyncio.Queue[OutboxMessage] = asyncio.Queue()

    async def handle(message: OutboxMessage) -> None:
        await arrived.put(message)

    try:
        await broker.publish(OutboxMessage("m-new", topic, "order-new", "{}", at))  # declares
        connection = await aio_pika.connect(rabbitmq_url)
        async with connection:
            channel = await connection.channel()
            old = aio_pika.Message(
                b'{"n": 2}',
                message_id="m-old",
                type=topic,
                timestamp=at,
                headers={"key": "order-old"},
                delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
            )
            await channel.default_exchange.publish(old, routing_key=topic)
        consumer = asyncio.create_task(broker.consume(topic, handle))
        first = await asyncio.wait_for(arrived.get(), 30)
        second = await asyncio.wait_for(arrived.get(), 30)
        consumer.cancel()
        await asyncio.gather(consumer, return_exceptions=True)
        assert (first.key, second.key) == ("order-new", "order-old")
        assert second == OutboxMessage("m-old", topic, "order-old", '{"n": 2}', at)
    finally:
        await broker.close()
        await _delete(rabbitmq_url, topic, dead_letters(topic))


async def test_a_consumer_whose_channel_close_goes_unanswered_gives_its_messages_back(
    rabbitmq_url: str,
) -> None:
    """The broker keeps a channel's unacknowledged messages while the channel lives. A
    consumer stopped mid-message whose channel's close is never answered: past the bound
    its connection is dropped (cut), so the broker gives the message out again, here to
    the consumer started next, as the worker does, on a fresh connection."""
    topic = f"stuck.{uuid.uuid4().hex[:8]}"
    sent = OutboxMessage("m-stuck", topic, "k", "{}", datetime(2026, 11, 22, 3, 4, 5, tzinfo=UTC))
    given: asyncio.Queue[OutboxMessage] = asyncio.Queue()

    async def never_returns(message: OutboxMessage) -> None:
        await given.put(message)
        await asyncio.Event().wait()  # never acknowledged

    async with Relay(rabbitmq_url) as relay:
        broker = RabbitBroker(relay.url, topics=[topic], attempts=5, timeout=1)
        try:
            await broker.publish(sent)
            consumer = asyncio.create_task(broker.consume(topic, never_returns))
            assert await asyncio.wait_for(given.get(), 30) == sent
            relay.hold()  # the broker hears nothing more on this connection
            consumer.cancel()
            await asyncio.gather(consumer, return_exceptions=True)
            again = asyncio.create_task(broker.consume(topic, never_returns))
            assert await asyncio.wait_for(given.get(), 30) == sent  # given out again
            again.cancel()
            await asyncio.gather(again, return_exceptions=True)
        finally:
            await broker.close()
            await _delete(rabbitmq_url, topic, dead_letters(topic))


async def test_a_message_past_the_brokers_size_limit_is_not_confirmed(rabbitmq_url: str) -> None:
    """The broker closes the publishing channel on it (its limit, 128 MiB by default): that
    one is not confirmed, and the channel, opened again, confirms a later publish."""
    topic = f"size.{uuid.uuid4().hex[:8]}"
    broker = RabbitBroker(rabbitmq_url, topics=[topic], attempts=5, timeout=30)
    at = datetime(2026, 11, 22, 5, 6, 7, tzinfo=UTC)
    huge = OutboxMessage("m-huge", topic, "k", "x" * (128 * 2**20 + 1), at)
    try:
        (answer,) = await broker.publish_many([huge])
        assert isinstance(answer, NotConfirmed)
        del huge
        after = OutboxMessage("m-after", topic, "k", "{}", at)
        answers = []
        for _ in range(50):  # as the relay does, after a pause: the channel opens again
            answers = await broker.publish_many([after])
            if answers == [None]:
                break
            await asyncio.sleep(0.2)
        assert answers == [None]
        assert await _ready(rabbitmq_url, topic) == 1  # the one after, not the huge one
    finally:
        await broker.close()
        await _delete(rabbitmq_url, topic, dead_letters(topic))
