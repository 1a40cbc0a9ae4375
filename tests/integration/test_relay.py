"""The outbox relay on real databases and RabbitMQ: two relays never publish one row, an
unconfirmed publish is retried after its backoff, the compensation job takes what a dead relay
left."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta

import aio_pika
import pytest

from raffle.bootstrap import Raffle, bootstrap
from raffle.domain.delivery import WON
from raffle.service.relay import compensate, relay
from raffle.settings import Settings
from tests.integration.delivery_world import (
    delivery_campaign,
    draw_wins,
    fresh_queues,
    pipeline,
)
from tests.integration.raffles import SettableClock
from tests.services import RabbitMQServer, free_port


async def _queued(url: str) -> int:
    connection = await aio_pika.connect(url)
    async with connection:
        channel = await connection.channel()
        queue = await channel.declare_queue(WON, passive=True)
        return queue.declaration_result.message_count or 0


async def _unpublished(raffle: Raffle) -> dict[str, int]:
    """Outbox messages by state, over every shard."""
    states: dict[str, int] = {}
    for uow in raffle.shards.every():
        async with uow:
            for state, n in (await uow.outbox.states()).items():
                states[state] = states.get(state, 0) + n
    return states


@pytest.mark.parametrize("backend", ["postgres", "mariadb"])
async def test_two_relays_never_publish_one_row_twice(
    backend: str, make_database_url: Callable[[str], Awaitable[str]], rabbitmq_url: str
) -> None:
    await fresh_queues(rabbitmq_url)
    settings = Settings(
        database_url=await make_database_url(backend),
        shard_urls=await make_database_url(backend),
        shard_tables=4,
        broker_url=rabbitmq_url,
    )
    writer = await pipeline(settings, delivery_campaign())
    other = bootstrap(settings)  # a second process: its own pools and broker connection
    try:
        orders = await draw_wins(writer, users=100, each=8)

        async def drain(raffle: Raffle, batch: int) -> int:
            total = 0
            while n := await relay(raffle.shards, raffle.broker, raffle.clock, batch=batch):
                total += n
            return total

        published = await asyncio.gather(drain(writer, 25), drain(other, 25))
        assert sum(published) == len(orders) == 800
        assert min(published) > 0  # both took part
        await asyncio.sleep(0.5)  # the queue's count settles
        assert await _queued(rabbitmq_url) == 800  # no row published twice
        assert await _unpublished(writer) == {"published": 800}
    finally:
        await other.close()
        await writer.close()


async def test_an_unconfirmed_publish_is_retried_after_its_backoff(
    make_database_url: Callable[[str], Awaitable[str]], rabbitmq_url: str
) -> None:
    await fresh_queues(rabbitmq_url)
    database = await make_database_url("postgres")
    nowhere = Settings(
        database_url=database,
        broker_url=f"amqp://guest:guest@127.0.0.1:{free_port()}/",
        publish_timeout_seconds=1.0,
        republish_after_seconds=30.0,
    )
    clock = SettableClock()
    down = await pipeline(nowhere, delivery_campaign())
    up = bootstrap(nowhere.model_copy(update={"broker_url": rabbitmq_url}), clock=clock)
    try:
        orders = await draw_wins(down, users=5, each=4)
        assert await relay(down.shards, down.broker, clock) == 0  # the broker is down
        assert await _unpublished(down) == {"failed": 20}
        assert await relay(up.shards, up.broker, clock) == 0  # backing off
        clock.current += timedelta(seconds=0.6)
        assert await relay(up.shards, up.broker, clock) == len(orders)
        assert await _unpublished(down) == {"published": 20}
    finally:
        await up.close()
        await down.close()


async def test_compensation_publishes_what_a_dead_relay_left(
    make_database_url: Callable[[str], Awaitable[str]], rabbitmq_url: str
) -> None:
    await fresh_queues(rabbitmq_url)
    settings = Settings(database_url=await make_database_url("postgres"), broker_url=rabbitmq_url)
    clock = SettableClock()
    raffle = await pipeline(settings, delivery_campaign())
    live = bootstrap(settings, clock=clock)
    try:
        await draw_wins(raffle, users=5, each=4)

        class Died(BaseException):
            pass

        async def die(point: str) -> None:
            if point == "relay.claimed":
                raise Died

        with pytest.raises(Died):
            await relay(live.shards, live.broker, clock, fault=die)
        assert await _unpublished(raffle) == {"sending": 20}
        age = timedelta(seconds=60)
        assert await relay(live.shards, live.broker, clock) == 0  # claimed: not the relay's
        assert await compensate(live.shards, live.broker, clock, age=age) == 0  # too young
        clock.current += timedelta(seconds=61)
        assert await compensate(live.shards, live.broker, clock, age=age) == 20
        assert await _unpublished(raffle) == {"published": 20}
        await asyncio.sleep(0.5)
        assert await _queued(rabbitmq_url) == 20
    finally:
        await live.close()
        await raffle.close()


async def test_a_relay_outlives_a_broker_restart(
    make_database_url: Callable[[str], Awaitable[str]], rabbitmq_server: RabbitMQServer
) -> None:
    """The same relay (and its connection) before and after the broker restarts: what it
    could not publish meanwhile is published once the broker is back, none of it lost."""
    await fresh_queues(rabbitmq_server.url)
    settings = Settings(
        database_url=await make_database_url("postgres"),
        broker_url=rabbitmq_server.url,
        publish_timeout_seconds=2.0,
        republish_after_seconds=5.0,
    )
    raffle = await pipeline(settings, delivery_campaign())
    try:
        await draw_wins(raffle, users=10, each=2)
        assert await relay(raffle.shards, raffle.broker, raffle.clock) == 20
        await asyncio.to_thread(rabbitmq_server.restart)
        await draw_wins(raffle, users=10, each=2)
        deadline = asyncio.get_running_loop().time() + 60
        while (await _unpublished(raffle)).get("published") != 40:
            assert asyncio.get_running_loop().time() < deadline, await _unpublished(raffle)
            await relay(raffle.shards, raffle.broker, raffle.clock)
            await compensate(raffle.shards, raffle.broker, raffle.clock, age=timedelta(seconds=5))
            await asyncio.sleep(0.2)
        await asyncio.sleep(0.5)
        assert await _queued(rabbitmq_server.url) == 40  # durable queue, persistent messages
    finally:
        await raffle.close()
