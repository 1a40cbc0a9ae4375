"""Two processes on one PostgreSQL and one Redis: a unit that comes back when an unpaid order
expires in one process clears the sold-out mark of the other, which sells it again."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

from raffle.adapters.sql.migrate import upgrade
from raffle.bootstrap import Raffle, bootstrap
from raffle.domain.flash_sales import PURCHASED, Answer, Currency, Sale
from raffle.settings import Settings
from tests.conftest import MakeDatabaseUrl
from tests.integration.raffles import SettableClock

SALE = 5151


@contextlib.asynccontextmanager
async def process(settings: Settings, clock: SettableClock) -> AsyncIterator[Raffle]:
    """A raffle as one API process runs it: its consumer, and its marks following the news."""
    raffle = bootstrap(settings, clock=clock)
    await raffle.start()
    tasks = [
        asyncio.create_task(raffle.broker.consume(PURCHASED, raffle.flash.handle)),
        asyncio.create_task(raffle.flash.watch()),
    ]
    try:
        yield raffle
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await raffle.close()


async def buy(raffle: Raffle, user: str) -> Answer:
    path = raffle.flash.gate.path(SALE, user, raffle.clock.now())
    return await raffle.flash.purchase(SALE, user, path, None)


async def test_an_expired_unit_clears_every_process_mark_and_sells_again(
    make_database_url: MakeDatabaseUrl, redis_url: str
) -> None:
    settings = Settings(
        database_url=await make_database_url("postgres"),
        redis_url=redis_url,
        flash_secret="s" * 32,  # both processes check each other's paths
        load_demo=False,
    )
    await upgrade(settings.database_url)
    clock = SettableClock(datetime.now(UTC))
    async with process(settings, clock) as one, process(settings, clock) as two:
        await asyncio.sleep(0.2)  # both subscribed
        now = clock.now()
        sale = Sale(SALE, "cup", 990, Currency.CENTS, 1, now, now + timedelta(hours=1))
        await one.flash.stock.unload(SALE)  # a Redis of another test's run
        await one.flash.create(sale)

        assert await buy(one, "alice") is Answer.QUEUED
        assert await buy(two, "bob") is Answer.SOLD_OUT
        assert two.flash.marks.sold_out(SALE)

        clock.current += timedelta(minutes=15)
        assert await one.flash.expire() == 1
        for _ in range(50):  # the news reaches the other process
            if not two.flash.marks.sold_out(SALE):
                break
            await asyncio.sleep(0.05)
        assert not two.flash.marks.sold_out(SALE)
        assert await buy(two, "bob") is Answer.QUEUED
        assert await two.flash.result(SALE, "bob") == f"fs{SALE}-bob-1"
        assert await one.flash.result(SALE, "alice") == Answer.SOLD_OUT  # expired
