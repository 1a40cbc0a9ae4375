"""A worker stopped while its broker is still connecting leaves no RabbitMQ connection open:
kept nowhere, one would live as long as the process (a crash test that stopped a worker as
it started left one per run, still open in the tests after it)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import aio_pika
import pytest
from aio_pika.abc import AbstractChannel, AbstractRobustConnection

from raffle.adapters.broker.rabbit import RabbitBroker
from raffle.domain.draws import OutboxMessage


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
