"""A flash sale's rush in one run on PostgreSQL + Redis + RabbitMQ: 20,000 purchases from
5,000 users (500 in flight) for 100 units: accepted/s while in stock, orders/s by the
consumers, seconds until every request is resolved; then sold-out purchases against the
health endpoint through the same app (in-process ASGI client, 64 callers).

    .venv/bin/python bench/flash_rush.py [--seconds 4] [--concurrency 64]

Throwaway PostgreSQL (tests/services.py, fsync off), Redis and RabbitMQ servers are started
and removed.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
# Python puts this file's folder first on sys.path, where bench/http.py would shadow the
# standard library's `http`.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != BENCH]

import httpx  # noqa: E402
from bench.flash_sale import rate  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from raffle.adapters.passwords import PasswordHasher  # noqa: E402
from raffle.adapters.sql.migrate import upgrade  # noqa: E402
from raffle.adapters.sql.tables.flash_sales import flash_order  # noqa: E402
from raffle.adapters.sql.transaction import transaction  # noqa: E402
from raffle.bootstrap import Raffle, bootstrap  # noqa: E402
from raffle.domain.errors import Unavailable  # noqa: E402
from raffle.domain.flash_sales import PURCHASED, Answer, Currency, Sale  # noqa: E402
from raffle.entrypoints import logs  # noqa: E402
from raffle.entrypoints.http.app import create_app  # noqa: E402
from raffle.service.auth import create_user, login  # noqa: E402
from raffle.settings import Settings  # noqa: E402
from tests.services import PostgresServer, RabbitMQServer, RedisServer  # noqa: E402

SALE, UNITS, USERS, REQUESTS, IN_FLIGHT = 1818, 100, 5_000, 20_000, 500
PASSWORD = "correct horse battery"


async def rush(raffle: Raffle) -> tuple[list[float], set[str], float]:
    """Every request answered (a 503 asked again); when each `queued` came, who heard it,
    and when the last answer came (monotonic)."""
    flash, now = raffle.flash, raffle.clock.now()
    users = [f"u{i}" for i in range(USERS)]
    picks = users + random.Random(18).choices(users, k=REQUESTS - USERS)
    random.Random(19).shuffle(picks)
    paths = {u: flash.gate.path(SALE, u, now) for u in users}
    queue: asyncio.Queue[str] = asyncio.Queue()
    for user in picks:
        queue.put_nowait(user)
    accepted: list[float] = []
    told: set[str] = set()

    async def player() -> None:
        while not queue.empty():
            user = queue.get_nowait()
            while True:
                try:
                    answer = await flash.purchase(SALE, user, paths[user], None)
                    break
                except Unavailable:
                    await asyncio.sleep(0.05)
            if answer is Answer.QUEUED:
                accepted.append(time.monotonic())
                told.add(user)

    await asyncio.gather(*(player() for _ in range(IN_FLIGHT)))
    return accepted, told, time.monotonic()


async def ordered(raffle: Raffle) -> int:
    o = flash_order.c
    async with transaction(raffle.engines[0]) as connection:
        query = select(func.count()).where(o.sale_id == SALE)
        return int((await connection.execute(query)).scalar_one())


async def watch_orders(raffle: Raffle, times: list[float]) -> None:
    """When each order appeared (polled every 10 ms)."""
    while len(times) < UNITS:
        found = await ordered(raffle)
        times += [time.monotonic()] * (found - len(times))
        await asyncio.sleep(0.01)


async def run(database: str, redis: str, broker: str, args: argparse.Namespace) -> None:
    settings = Settings(
        database_url=database,
        redis_url=redis,
        broker_url=broker,
        load_demo=False,
        flash_purchases_per_second=1_000_000,
        flash_address_per_second=1_000_000,
        flash_paths_per_minute=1_000_000,
        log_level="warning",
    )
    logs.configure(settings)
    await upgrade(database)
    raffle = bootstrap(settings)
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    await raffle.start()
    now = datetime.now(UTC)
    sale = Sale(SALE, "cup", 990, Currency.CENTS, UNITS, now, now + timedelta(hours=1))
    await raffle.flash.create(sale)
    consumers = [asyncio.create_task(raffle.broker.consume(PURCHASED, raffle.flash.handle))]
    times: list[float] = []
    watcher = asyncio.create_task(watch_orders(raffle, times))
    began = time.monotonic()
    accepted, told, answered = await rush(raffle)
    await asyncio.wait_for(watcher, 60)

    async def resolve(user: str) -> None:  # polled as a page does, every 50 ms
        while True:
            if await raffle.flash.result(SALE, user) != Answer.QUEUED:
                return
            await asyncio.sleep(0.05)

    # A request answered sold out or already bought is resolved when answered; one answered
    # queued, when its result is the order (or -1).
    await asyncio.gather(*(resolve(user) for user in told))
    resolved = time.monotonic()
    span = max(accepted[-1] - accepted[0], 1e-6)
    print(f"requests answered: {REQUESTS:,} in {answered - began:.2f} s "
          f"({REQUESTS / (answered - began):,.0f}/s)")  # fmt: skip
    print(
        f"accepted while in stock: {len(accepted)} in {span:.3f} s ({len(accepted) / span:,.0f}/s)"
    )
    order_span = max(times[-1] - times[0], 1e-6)
    print(f"orders created: {len(times)} in {order_span:.3f} s ({len(times) / order_span:,.0f}/s)")
    print(f"start to all {REQUESTS:,} resolved: {resolved - began:.2f} s")
    await sold_out_against_health(raffle, args)
    for task in consumers:
        task.cancel()
    await raffle.close()


async def sold_out_against_health(raffle: Raffle, args: argparse.Namespace) -> None:
    transport = httpx.ASGITransport(app=create_app(raffle, scheduler=False))
    now = raffle.clock.now()
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        headers, paths = [], []
        for n in range(50):
            await create_user(f"user{n}", PASSWORD, False, raffle.uow(), raffle.hasher)
            token, _ = await login(
                f"user{n}", PASSWORD, ip=f"10.0.0.{n}", uow=raffle.uow(), hasher=raffle.hasher,
                sessions=raffle.sessions, limiter=raffle.limiter, clock=raffle.clock,
                ttl_seconds=3600,
            )  # fmt: skip
            headers.append({"Authorization": f"Bearer {token}"})
            paths.append(raffle.flash.gate.path(SALE, f"user{n}", now))

        async def sold_out(n: int) -> int:
            u = n % len(paths)
            url = f"/api/flash-sales/{SALE}/{paths[u]}/purchase"
            return (await client.post(url, headers=headers[u])).status_code

        async def health(n: int) -> int:
            return (await client.get("/api/health")).status_code

        assert await sold_out(0) == 200
        for name, call in (("health", health), ("sold_out", sold_out)) * 2:
            found = await rate(call, args.seconds, args.concurrency)
            print(f"{name}: {found:,.0f} requests/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    servers = PostgresServer(), RedisServer(), RabbitMQServer()
    try:
        for server in servers:
            server.start()
        asyncio.run(run(servers[0].url, servers[1].url, servers[2].url, args))
    finally:
        for server in servers:
            server.close()


if __name__ == "__main__":
    main()
