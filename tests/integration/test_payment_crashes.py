"""The payment path on the embedded default and on PostgreSQL or MariaDB with RabbitMQ, the
consumer dying at each point: access is granted exactly once, and a duplicate payment is
refunded exactly once, whatever dies where."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from raffle.domain.payments import OrderState, PaymentOrder, PaymentState
from raffle.service.payment_jobs import REFUND_AFTER
from raffle.settings import Settings
from tests.alipay_world import NotifyUrl, Sim
from tests.integration.delivery_world import fresh_queues
from tests.integration.payment_world import Shop, alipay_settings, eventually, shop, working
from tests.integration.raffles import SettableClock


class Crash(BaseException):
    """The process dies here: nothing after it runs, no handler catches it."""


@pytest.fixture(params=["sqlite", "postgres+rabbitmq", "mariadb+rabbitmq"])
async def settings(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    make_database_url: Callable[[str], Awaitable[str]],
    sim: Sim,
    sink: NotifyUrl,
    merchant: rsa.RSAPrivateKey,
) -> AsyncIterator[Settings]:
    """The embedded default (SQLite, the in-process broker, whose publish is confirmed only
    once handled), or two real databases with RabbitMQ."""
    values: dict[str, object] = {
        "delivery_attempts": 20,
        "publish_timeout_seconds": 2.0,
        "republish_after_seconds": 3.0,
        **alipay_settings(sim, merchant, sink),
    }
    if request.param == "sqlite":
        database_url = f"sqlite:///{tmp_path}/raffle.db"
        yield Settings(database_url=database_url, **values)  # type: ignore[arg-type]
        return
    backend = request.param.split("+")[0]
    rabbitmq_url = str(request.getfixturevalue("rabbitmq_url"))
    await fresh_queues(rabbitmq_url)
    yield Settings(
        database_url=await make_database_url(backend),
        shard_urls=await make_database_url(backend),
        shard_tables=4,
        broker_url=rabbitmq_url,
        **values,  # type: ignore[arg-type]
    )
    await fresh_queues(rabbitmq_url)  # declared with this test's delivery limit


async def _crashing(first: Shop, point: str) -> None:
    """Runs the worker in `first` until it dies at `point`, then closes it as a dead
    process's connections close."""
    crashed = asyncio.Event()

    async def fault(where: str) -> None:
        if where == point and not crashed.is_set():
            crashed.set()
            raise Crash(where)

    try:
        async with working(first.raffle, fault=fault):
            await asyncio.wait_for(crashed.wait(), 20)
    finally:
        await first.api.aclose()
        await first.raffle.close()
        gc.collect()


@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize(
    "point",
    ["payment.received", "payment.paid", "payment.before_commit", "consumer.before_ack"],
)
async def test_a_crash_on_the_payment_path_grants_access_exactly_once(
    settings: Settings, sim: Sim, sink: NotifyUrl, point: str
) -> None:
    """Dies after the notification is recorded (the message in hand), after the order is
    paid but before the grant, after both before the commit, after the commit before the
    ack; a new process then applies the payment: paid once, granted once."""
    first = await shop(settings, sim, sink)
    order = await first.shown("alice")
    (form,) = await first.paid(order)
    assert await first.notify(form) == "success"
    await _crashing(first, point)
    again = await shop(settings, sim, sink, sell=False)
    try:
        async with working(again.raffle):
            await eventually(lambda: _order_is(again, order.out_trade_no, OrderState.PAID))
            await asyncio.sleep(0.5)  # a redelivery, if any, acts now
        async with again.raffle.shards.for_user("alice") as uow:
            grants = await uow.grants.of_user("alice")
            payments = await uow.payments.payments_of(order.out_trade_no)
            history = await uow.payments.history(order.out_trade_no)
        assert [g.order_id for g in grants] == [order.out_trade_no]
        assert [p.state for p in payments] == [PaymentState.APPLIED]
        assert [c.to_state for c in history].count(OrderState.PAID) == 1
    finally:
        await again.api.aclose()
        await again.raffle.close()


@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize(
    "point", ["payment.before_refund", "payment.refunded", "consumer.before_ack"]
)
async def test_a_duplicate_payment_is_refunded_once_when_the_consumer_dies(
    settings: Settings, sim: Sim, sink: NotifyUrl, point: str
) -> None:
    """The consumer dies between recording the refund due and calling the gateway, after
    the gateway refunded before that is recorded, or after both before the ack; the next
    process (its refund job, or the redelivery) ends with exactly one refund at the
    simulator."""
    first = await shop(settings, sim, sink)
    order = await first.shown("bob")
    forms = await first.paid(order, times=2)
    assert {await first.notify(form) for form in forms} == {"success"}
    await _crashing(first, point)
    later = SettableClock()
    later.current += REFUND_AFTER + timedelta(seconds=1)  # the refund job's wait is over
    again = await shop(settings, sim, sink, later, sell=False)
    try:
        async with working(again.raffle):
            await eventually(lambda: _refunded(again, order.out_trade_no))
            await asyncio.sleep(0.5)
        refunds = await sim.refunds()
        assert len(refunds) == 1
        found = await _order(again, order.out_trade_no)
        assert found.state is OrderState.PAID
        assert refunds[0]["trade_no"] != found.trade_no
        async with again.raffle.shards.for_user("bob") as uow:
            assert len(await uow.grants.of_user("bob")) == 1
    finally:
        await again.api.aclose()
        await again.raffle.close()


async def _order(world: Shop, number: str) -> PaymentOrder:
    uow = world.ctx.shard(number)
    assert uow is not None
    async with uow:
        found = await uow.payments.get(number)
    assert found is not None
    return found


async def _order_is(world: Shop, number: str, state: OrderState) -> bool:
    return (await _order(world, number)).state is state


async def _refunded(world: Shop, number: str) -> bool:
    uow = world.ctx.shard(number)
    assert uow is not None
    async with uow:
        found = await uow.payments.payments_of(number)
    return PaymentState.REFUNDED in {p.state for p in found}
