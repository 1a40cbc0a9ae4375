"""Strays on SQLite and on PostgreSQL with Redis: a unit taken under a seq below a later order
of the same user (a sale's `per_user` above 1) comes back once, and its purchase is refused."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path

import pytest

from raffle.adapters.sql.migrate import upgrade
from raffle.bootstrap import Raffle, bootstrap
from raffle.domain.flash_sales import PURCHASED, Answer, Currency, OrderState, Purchase, Sale
from raffle.service.flash_strays import Strays, reconcile
from raffle.settings import Settings
from tests.integration.raffles import SettableClock
from tests.integration.redis_clients import redis_settings

SALE = 7171
GRACE = timedelta(minutes=5)


@pytest.fixture(params=["sqlite", "postgres+redis"])
async def raffle(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    make_database_url: Callable[[str], Awaitable[str]],
) -> AsyncIterator[Raffle]:
    if request.param == "sqlite":
        values: dict[str, object] = {"database_url": f"sqlite:///{tmp_path}/raffle.db"}
    else:
        values = {
            "database_url": await make_database_url("postgres"),
            **await redis_settings(request, "redis"),
        }
    settings = Settings(load_demo=False, **values)  # type: ignore[arg-type]
    await upgrade(settings.database_url)
    made = bootstrap(settings, clock=SettableClock())
    await made.start()
    consumer = asyncio.create_task(made.broker.consume(PURCHASED, made.flash.handle))
    try:
        yield made
    finally:
        consumer.cancel()
        await asyncio.gather(consumer, return_exceptions=True)
        await made.close()


async def _buy(raffle: Raffle, user: str) -> Answer:
    path = raffle.flash.gate.path(SALE, user, raffle.clock.now())
    return await raffle.flash.purchase(SALE, user, path, None)


async def _result(raffle: Raffle, user: str) -> Answer | str:
    for _ in range(100):  # the consumer makes the order
        if isinstance(found := await raffle.flash.result(SALE, user), str):
            return found
        await asyncio.sleep(0.05)
    return found


async def test_a_stray_below_a_later_order_of_its_user_comes_back_once(raffle: Raffle) -> None:
    flash, clock = raffle.flash, raffle.clock
    assert isinstance(clock, SettableClock)
    now = clock.now()
    sale = Sale(SALE, "cup", 990, Currency.CENTS, 2, now, now + timedelta(hours=1), per_user=2)
    await flash.create(sale)
    await flash.stock.take(SALE, "alice", 2, "lost")  # seq 1: its message never sent
    assert await _buy(raffle, "alice") is Answer.QUEUED  # seq 2, ordered
    assert await _result(raffle, "alice") == f"fs{SALE}-alice-2"
    assert await _buy(raffle, "bob") is Answer.SOLD_OUT

    strays = Strays()
    assert await reconcile(flash, strays) == 0  # first seen
    clock.current += GRACE + timedelta(seconds=1)
    assert await reconcile(flash, strays) == 1
    assert await flash.stock.left(SALE) == 1
    states = [(o.seq, o.state) for o in await flash.store.of_user(SALE, "alice")]
    assert states == [(1, OrderState.REFUSED), (2, OrderState.AWAITING_PAYMENT)]
    assert await flash.result(SALE, "alice") == f"fs{SALE}-alice-2"

    # The lost purchase arriving after all is refused: its unit went back already.
    assert await flash.store.order(Purchase(SALE, "alice", 1, now), sale, None) == ""
    assert await _buy(raffle, "bob") is Answer.QUEUED
    assert await _result(raffle, "bob") == f"fs{SALE}-bob-1"
    clock.current += 2 * GRACE
    assert await reconcile(flash, strays) == 0
    assert await reconcile(flash, strays) == 0  # resolved once
    assert await flash.stock.left(SALE) == 0
    assert await flash.store.counts(SALE) == {"awaiting_payment": 2, "refused": 1}
