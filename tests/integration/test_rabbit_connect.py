"""No RabbitMQ connection is left open: not by a worker stopped while its broker is still
connecting (kept nowhere, one would live as long as the process: a crash test that stopped a
worker as it started left one per run, still open in the tests after it), nor by a close the
peer never lets finish (it ends once the heartbeats give the peer up)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import aio_pika
import pytest
from aio_pika.abc import AbstractChannel, AbstractRobustConnection

from raffle.adapters.broker.rabbit import RabbitBroker
from raffle.adapters.broker.rabbit_connection import close_within, connect, finished_within
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


async def test_a_connection_whose_peer_stopped_reading_is_let_go_within_its_heartbeats(
    rabbitmq_url: str,
) -> None:
    """Its close cannot finish (the last frames never leave): the bounded close returns at
    its bound, and the close left running ends within a few heartbeats, the broker having
    heard nothing on the connection, so nothing lingers open."""
    async with Relay(rabbitmq_url) as relay:
        # Five seconds rather than the bound's two: still closing when the bound has passed.
        connection = await connect(f"{relay.url}?heartbeat=5", bound=1)
        channel = await connection.channel(publisher_confirms=False)
        relay.stall()

        async def fill() -> None:
            # Until a publish waits for room: what the sockets take no more. aio-pika's
            # publish returns once its bytes are handed to the socket.
            while True:
                publish = channel.default_exchange.publish(
                    aio_pika.Message(b"x" * 10_000), routing_key="nowhere"
                )
                if not await finished_within(1, publish):
                    return

        await asyncio.wait_for(fill(), 30)
        loop = asyncio.get_running_loop()
        started = loop.time()
        await close_within(connection, 1)
        assert loop.time() - started < 3  # at its bound, not the writer's 183 s
        assert not connection.is_closed  # still closing: it could not finish by itself
        await asyncio.wait_for(connection.closed(), 30)  # the broker gave it up: ended
