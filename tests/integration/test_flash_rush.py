"""A flash sale's rush, 20,000 purchases from 5,000 users for 100 units, on PostgreSQL or
MariaDB with Redis and RabbitMQ (and on the embedded default); then the same with Redis
restarted without persistence mid-sale and the consumers killed twice."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.tables.flash_sales import flash_order
from raffle.adapters.sql.transaction import transaction
from raffle.bootstrap import Raffle, bootstrap
from raffle.domain.errors import Unavailable
from raffle.domain.flash_sales import PURCHASED, Answer, Currency, Sale
from raffle.service.ports import dead_letters
from raffle.service.ports.flash_sales import Taking
from raffle.settings import Settings
from tests.conftest import MakeDatabaseUrl
from tests.integration.delivery_world import fresh_queues
from tests.services import RedisServer

SALE = 1818
UNITS, USERS, REQUESTS, IN_FLIGHT = 100, 5_000, 20_000, 500
RESOLVE_SECONDS = 120.0  # generous: a correctness test, run beside the whole suite on 2 cores
RETRY_SECONDS = 0.05  # a player's page asking again after a 503
ARRIVAL_SECONDS = 0.002  # between players starting: all IN_FLIGHT of them within a second


def settings_for(**more: object) -> Settings:
    return Settings(
        flash_purchases_per_second=1_000,
        flash_paths_per_minute=1_000,
        flash_address_per_second=1_000_000,
        load_demo=False,
        **more,  # type: ignore[arg-type]
    )


@contextlib.asynccontextmanager
async def started(settings: Settings) -> AsyncIterator[Raffle]:
    await upgrade(settings.database_url)
    raffle = bootstrap(settings)
    await raffle.start()
    now = datetime.now(UTC)
    sale = Sale(SALE, "限量保温杯", 990, Currency.CENTS, UNITS, now, now + timedelta(hours=1))
    await raffle.flash.create(sale)
    try:
        yield raffle
    finally:
        await raffle.close()


@dataclass
class Consumers:
    """The purchases' consumers, as a worker runs them; `kill` cancels them mid-work (their
    unacknowledged deliveries go back to the queue) and `start` runs them again."""

    raffle: Raffle
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def start(self) -> None:
        for queue in (PURCHASED, dead_letters(PURCHASED)):
            self.tasks.append(asyncio.create_task(self._consume(queue)))

    async def _consume(self, queue: str) -> None:
        """Started again when it fails, as the worker does (a channel lost, or opened on a
        connection a kill left closing)."""
        while True:
            with contextlib.suppress(Exception):
                await self.raffle.broker.consume(queue, self.raffle.flash.handle)
            await asyncio.sleep(0.1)

    async def kill(self) -> None:
        tasks, self.tasks = self.tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


Hook = Callable[[int], Awaitable[None]]  # called with the count of `queued` answers so far


Said = dict[str, list[Answer | None]]  # per user, each answer; None: a 503


async def rush(raffle: Raffle, hook: Hook | None = None) -> Said:
    """REQUESTS purchases by USERS users (each at least once, some many times), by IN_FLIGHT
    players arriving over a second, each asking again at once; a 503 (nothing taken) is
    asked again, as a page does. The answers per user."""
    flash, now = raffle.flash, raffle.clock.now()
    users = [f"u{i}" for i in range(USERS)]
    picks = users + random.Random(18).choices(users, k=REQUESTS - USERS)
    random.Random(19).shuffle(picks)
    paths = {u: flash.gate.path(SALE, u, now) for u in users}
    answers: Said = {u: [] for u in users}
    queue: asyncio.Queue[str] = asyncio.Queue()
    for user in picks:
        queue.put_nowait(user)
    queued = 0

    async def player(n: int) -> None:
        nonlocal queued
        await asyncio.sleep(n * ARRIVAL_SECONDS)  # the crowd gathers over a second
        while not queue.empty():
            user = queue.get_nowait()
            while True:
                try:
                    answer = await flash.purchase(SALE, user, paths[user], None)
                    break
                except Unavailable:
                    answers[user].append(None)  # told to ask again: nothing held for them
                    await asyncio.sleep(RETRY_SECONDS)
            answers[user].append(answer)
            if answer is Answer.QUEUED:
                queued += 1
                if hook is not None:
                    await hook(queued)

    await asyncio.gather(*(player(n) for n in range(IN_FLIGHT)))
    return answers


async def resolved(raffle: Raffle, answers: Said, started: float) -> dict[str, int | str]:
    """Each user told `queued`: polled until the result is an order or -1, within
    RESOLVE_SECONDS of the rush's start."""
    waiting = {u for u, said in answers.items() if Answer.QUEUED in said}
    found: dict[str, int | str] = {}
    while waiting and time.monotonic() - started < RESOLVE_SECONDS:
        for user in list(waiting):
            result = await raffle.flash.result(SALE, user)
            if result != Answer.QUEUED:
                found[user] = result if isinstance(result, str) else int(result)
                waiting.discard(user)
        await asyncio.sleep(0.1)
    assert not waiting, f"{len(waiting)} queued purchases unresolved after {RESOLVE_SECONDS} s"
    return found


async def orders(raffle: Raffle) -> list[tuple[str, str, int]]:
    o = flash_order.c
    async with transaction(raffle.engines[0]) as connection:
        query = select(o.user_id, o.state, o.seq).where(o.sale_id == SALE)
        return [(user, state, seq) for user, state, seq in await connection.execute(query)]


async def check_the_books(
    raffle: Raffle, answers: Said, results: dict[str, int | str], *, lost: int = 0
) -> None:
    """Exactly the stock sold, once per user, each order found by its buyer; the fast stock's
    units left and the orders add up to the stock. After the fast stock lost its data while
    `lost` purchases were queued, it was rebuilt from the orders without them (FlashSales.load):
    it may count up to that many units more than the database has, never fewer."""
    stored = await orders(raffle)
    live = [user for user, state, _ in stored if state in ("done", "awaiting_payment")]
    expired = [user for user, state, _ in stored if state == "expired"]
    assert len(live) == UNITS  # exactly: demand was far above the stock
    assert max(Counter(live).values()) == 1  # no user with two
    # An order only for a purchase answered `queued`, or one told to ask again (a 503): a
    # publish whose confirmation was lost (a connection dropped under it) may have arrived,
    # and its order is theirs, found by their result.
    told = {u for u, said in answers.items() if Answer.QUEUED in said}
    unconfirmed = {u for u, said in answers.items() if None in said} - told
    assert set(live) <= told | unconfirmed
    for user in set(live) - told:
        results[user] = await raffle.flash.result(SALE, user)
    ordered = {u for u, r in results.items() if isinstance(r, str)}
    assert ordered == set(live), [
        (u, answers[u], results.get(u), [row for row in stored if row[0] == u])
        for u in ordered ^ set(live)
    ]
    left = await raffle.flash.stock.left(SALE)
    assert left is not None
    assert UNITS <= left + len(live) + len(expired) <= UNITS + lost


@pytest.fixture(params=["postgres", "mariadb"])
async def production(
    request: pytest.FixtureRequest,
    make_database_url: MakeDatabaseUrl,
    own_redis: RedisServer,
    rabbitmq_url: str,
) -> AsyncIterator[Raffle]:
    await fresh_queues(rabbitmq_url)
    settings = settings_for(
        database_url=await make_database_url(request.param),
        redis_url=own_redis.url,
        broker_url=rabbitmq_url,
    )
    async with started(settings) as raffle:
        yield raffle
    await fresh_queues(rabbitmq_url)


async def test_a_rush_sells_exactly_the_stock_once_per_user(production: Raffle) -> None:
    consumers = Consumers(production)
    consumers.start()
    begun = time.monotonic()
    answers = await rush(production)
    results = await resolved(production, answers, begun)
    await check_the_books(production, answers, results)
    await consumers.kill()


async def test_a_redis_restart_and_consumers_killed_twice_lose_and_oversell_nothing(
    production: Raffle, own_redis: RedisServer
) -> None:
    consumers = Consumers(production)
    consumers.start()
    stock, take = production.flash.stock, production.flash.stock.take
    taken: list[Taking] = []
    restarted: list[asyncio.Task[None]] = []

    async def counted(sale_id: int, user_id: str, per_user: int, attempt: str) -> Taking:
        taking = await take(sale_id, user_id, per_user, attempt)
        if taking.answer is Answer.QUEUED:
            taken.append(taking)
            if len(taken) == UNITS // 2:  # mid-sale, at once: every unit and buyer forgotten
                own_redis.kill()
                restarted.append(asyncio.create_task(asyncio.to_thread(own_redis.start)))
        return taking

    stock.take = counted  # type: ignore[method-assign]

    async def trouble(queued: int) -> None:
        if queued in (20, 60):
            await consumers.kill()
            await asyncio.sleep(0.2)
            consumers.start()

    begun = time.monotonic()
    answers = await rush(production, trouble)
    await asyncio.gather(*restarted)
    assert len(restarted) == 1
    results = await resolved(production, answers, begun)
    # At most the purchases queued before Redis went, not yet orders then.
    await check_the_books(production, answers, results, lost=UNITS // 2)
    await consumers.kill()


async def test_the_embedded_default_sells_exactly_the_stock(tmp_path: object) -> None:
    settings = settings_for(database_url=f"sqlite:///{tmp_path}/flash.db")
    async with started(settings) as raffle:
        consumers = Consumers(raffle)
        consumers.start()
        begun = time.monotonic()
        answers = await rush(raffle)
        results = await resolved(raffle, answers, begun)
        await check_the_books(raffle, answers, results)
        await consumers.kill()
