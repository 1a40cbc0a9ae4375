"""Flash sale orders priced in cents paid through payment orders at the Alipay simulator
(SQLite; PostgreSQL with Redis): paid → done and delivered once; unpaid → closed, expired."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from raffle.domain.draws import WinState
from raffle.domain.flash_sales import SOLD_AWARD, Answer, Currency, NothingToPay, OrderState, Sale
from raffle.domain.payments import OrderState as PaymentState
from raffle.service import payments as use
from raffle.service.flash_payments import pay
from raffle.settings import Settings
from tests.alipay_world import NotifyUrl, Sim
from tests.integration.payment_world import Shop, alipay_settings, eventually, shop, working
from tests.integration.raffles import PRIZE, SettableClock
from tests.integration.redis_clients import redis_settings

SALE = 1515


@pytest.fixture(params=["sqlite", "postgres+redis"])
async def world(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    make_database_url: Callable[[str], Awaitable[str]],
    sim: Sim,
    sink: NotifyUrl,
    merchant: rsa.RSAPrivateKey,
) -> AsyncIterator[tuple[Shop, SettableClock]]:
    values: dict[str, object] = alipay_settings(sim, merchant, sink)
    if request.param == "sqlite":
        values["database_url"] = f"sqlite:///{tmp_path}/raffle.db"
    else:
        values |= {
            "database_url": await make_database_url("postgres"),
            "shard_urls": await make_database_url("postgres"),
            "shard_tables": 4,
            **await redis_settings(request, "redis"),
        }
    clock = SettableClock()
    made = await shop(Settings(load_demo=False, **values), sim, sink, clock, sell=False)
    now = clock.now()
    sale = Sale(SALE, "台灯", 990, Currency.CENTS, 2, now, now + timedelta(hours=1), award_id=PRIZE)
    await made.raffle.flash.create(sale)
    try:
        yield made, clock
    finally:
        await made.api.aclose()
        await made.raffle.close()


async def _ordered(world: Shop, user: str) -> str:
    flash = world.raffle.flash
    path = flash.gate.path(SALE, user, flash.clock.now())
    assert await flash.purchase(SALE, user, path, None) is Answer.QUEUED
    found: list[str | Answer] = []

    async def made() -> bool:
        found[:] = [await flash.result(SALE, user)]
        return isinstance(found[0], str)

    await eventually(made)
    return str(found[0])


async def _state(world: Shop, user: str) -> OrderState:
    (order,) = await world.raffle.flash.store.of_user(SALE, user)
    return order.state


async def test_a_paid_order_is_done_and_delivered_once(world: tuple[Shop, SettableClock]) -> None:
    shop_, clock = world
    async with working(shop_.raffle):
        order_id = await _ordered(shop_, "alice")
        assert await _state(shop_, "alice") is OrderState.AWAITING_PAYMENT
        payment = await pay("alice", SALE, shop_.raffle.flash, shop_.ctx)
        again = await pay("alice", SALE, shop_.raffle.flash, shop_.ctx)
        assert again.out_trade_no == payment.out_trade_no  # one open payment order at a time
        assert payment.amount_cents == 990
        await use.qr_code("alice", payment.out_trade_no, shop_.ctx)
        (form,) = await shop_.paid(payment)
        assert await shop_.notify(form) == "success"
        assert await shop_.notify(form) == "success"  # notified again: applied once

        async def delivered() -> bool:
            async with shop_.raffle.shards.for_user("alice") as uow:
                win = await uow.wins.get(order_id)
            return win is not None and win.state is WinState.COMPLETED

        await eventually(delivered)
    assert await _state(shop_, "alice") is OrderState.DONE
    async with shop_.raffle.shards.for_user("alice") as uow:
        win = await uow.wins.get(order_id)
        paid = await uow.payments.get(payment.out_trade_no)
        shipment = await uow.shipments.get(order_id)
    assert win is not None
    assert win.rule == SOLD_AWARD
    assert paid is not None
    assert paid.state is PaymentState.PAID
    assert shipment is not None  # the lamp, to be shipped once
    with pytest.raises(NothingToPay):
        await pay("alice", SALE, shop_.raffle.flash, shop_.ctx)
    clock.current += timedelta(minutes=20)
    assert await shop_.raffle.flash.expire() == 0  # done: never expires


async def test_an_unpaid_order_closes_its_payment_then_expires(
    world: tuple[Shop, SettableClock],
) -> None:
    shop_, clock = world
    async with working(shop_.raffle):
        await _ordered(shop_, "bob")
    payment = await pay("bob", SALE, shop_.raffle.flash, shop_.ctx)
    await use.qr_code("bob", payment.out_trade_no, shop_.ctx)
    assert await shop_.raffle.flash.stock.left(SALE) == 1
    clock.current += timedelta(minutes=16)
    assert await shop_.raffle.flash.expire() == 1
    assert await _state(shop_, "bob") is OrderState.EXPIRED
    closed = await use.mine("bob", payment.out_trade_no, shop_.ctx)
    assert closed.state is PaymentState.CLOSED
    assert await shop_.raffle.flash.stock.left(SALE) == 2  # the unit is back
    with pytest.raises(NothingToPay):
        await pay("bob", SALE, shop_.raffle.flash, shop_.ctx)
