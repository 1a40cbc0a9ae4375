"""No RabbitMQ connection is left open: not by a worker stopped while its broker is still
connecting (kept nowhere, one would live as long as the process: a crash test that stopped a
worker as it started left one per run, still open in the tests after it), nor by a close the
peer never lets finish."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import aio_pika
import pytest
from aio_pika.abc import AbstractChannel, AbstractRobustConnection

from raffle.adapters.broker.rabbit import RabbitBroker
from raffle.adapters.broker.rabbit_connection import CuttableConnection
from raffle.domain.draws import OutboxMessage
from tests.integration.relay import Relay


async def _nothing(message: OutboxMessage) -> None:
    raise AssertionError(f"no message was published, yet {message} arrived")


async def test_a_consumer_stopped_while_declaring_closes_its_connection(
    rabbitmq_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[AbstractRobustConnection] = []
    declaring = asyncio.Event()
    connect = aio_pika.connect_robust

    async def recorded(*args: Any, **kwargs: Any) -> AbstractRobustConnection:
        opened.append(connection := await connect(*args, **kwargs))
        return connection

    async def declare_slowly(self: RabbitBroker, channel: AbstractChannel) -> None:
        declaring.set()
        await asyncio.sleep(60)  # the stop comes here, between connecting and keeping it

    monkeypatch.setattr(aio_pika, "connect_robust", recorded)
    monkeypatch.setattr(RabbitBroker, "_declare", declare_slowly)
    broker = RabbitBroker(
        rabbitmq_url, topics=[f"c.{uuid.uuid4().hex[:8]}"], attempts=5, timeout=10
    )
    consumer = asyncio.create_task(broker.consume("c", _nothing))
    await asyncio.wait_for(declaring.wait(), 10)
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    assert len(opened) == 1
    assert opened[0].is_closed
    await broker.close()  # had kept nothing to close


async def test_a_connection_whose_peer_stopped_reading_is_cut_past_the_bound(
    rabbitmq_url: str,
) -> None:
    """Its close cannot finish (the last frames never leave, nor the socket closes after
    them); `close_within` cuts the socket all the same, so nothing lingers open."""
    async with Relay(rabbitmq_url) as relay:
        connection = await aio_pika.connect_robust(relay.url, connection_class=CuttableConnection)
        channel = await connection.channel(publisher_confirms=False)
        transport = connection.sockets.transport
        assert transport is not None
        relay.stall()

        full = asyncio.Event()

        async def flood() -> None:
            # Until the socket's buffers are full. Smaller than the writer's high-water mark
            # (64 KiB), so a publish still returns once bytes are left waiting, to see them.
            while True:
                message = aio_pika.Message(b"x" * 10_000)
                await channel.default_exchange.publish(message, routing_key="nowhere")
                if transport.get_write_buffer_size() > 0:  # what the kernel takes no more
                    full.set()

        flooding = asyncio.create_task(flood())
        await asyncio.wait_for(full.wait(), 30)
        await asyncio.wait_for(connection.close_within(1), 30)  # not its writer's 183 s
        flooding.cancel()
        await asyncio.gather(flooding, return_exceptions=True)
        await asyncio.sleep(0)  # the transport lets go of its socket on the next turn
        assert transport.get_extra_info("socket").fileno() == -1  # closed
