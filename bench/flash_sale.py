"""Flash sale purchases once sold out against GET /api/health, through the same ASGI app in
one process: how much a sold-out answer costs beyond the app's own (a script, not a test).

    .venv/bin/python -m bench.flash_sale                        # embedded: SQLite, memory
    .venv/bin/python -m bench.flash_sale --redis redis://127.0.0.1:6379/0
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from raffle.adapters.passwords import PasswordHasher
from raffle.adapters.sql.migrate import upgrade
from raffle.bootstrap import bootstrap
from raffle.domain.flash_sales import PURCHASED, Currency, Sale
from raffle.entrypoints import logs
from raffle.entrypoints.http.app import create_app
from raffle.service.auth import create_user, login
from raffle.settings import Settings

SALE, USERS = 9191, 50


async def rate(call: Callable[[int], Awaitable[int]], seconds: float, concurrency: int) -> float:
    """Requests answered per second by `concurrency` callers over `seconds`."""
    done, deadline = 0, time.perf_counter() + seconds

    async def caller(n: int) -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            assert await call(n) == 200
            done += 1

    began = time.perf_counter()
    await asyncio.gather(*(caller(n) for n in range(concurrency)))
    return done / (time.perf_counter() - began)


async def main(redis: str | None, seconds: float, concurrency: int) -> None:
    folder = Path(tempfile.mkdtemp())
    settings = Settings(
        database_url=f"sqlite:///{folder / 'bench.db'}",
        redis_url=redis,
        load_demo=False,
        flash_purchases_per_second=1_000_000,
        flash_address_per_second=1_000_000,
        flash_paths_per_minute=1_000_000,
        log_level="warning",  # no line per request: both sides alike
    )
    logs.configure(settings)
    await upgrade(settings.database_url)
    raffle = bootstrap(settings)
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    await raffle.start()
    now = datetime.now(UTC)
    await raffle.flash.create(Sale(SALE, "cup", 990, Currency.CENTS, 1, now, now + timedelta(1)))
    consumer = asyncio.create_task(raffle.broker.consume(PURCHASED, raffle.flash.handle))
    transport = httpx.ASGITransport(app=create_app(raffle, scheduler=False))
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        headers, paths = [], []
        for n in range(USERS):
            await create_user(
                f"user{n}", "correct horse battery", False, raffle.uow(), raffle.hasher
            )
            token, _ = await login(
                f"user{n}", "correct horse battery", ip=f"10.0.0.{n}", uow=raffle.uow(),
                hasher=raffle.hasher, sessions=raffle.sessions, limiter=raffle.limiter,
                clock=raffle.clock, ttl_seconds=3600,
            )  # fmt: skip
            headers.append({"Authorization": f"Bearer {token}"})
            paths.append(raffle.flash.gate.path(SALE, f"user{n}", now))
        first = await client.post(
            f"/api/flash-sales/{SALE}/{paths[0]}/purchase", headers=headers[0]
        )
        assert first.json()["status"] == "queued", first.text  # the one unit: sold out now

        async def sold_out(n: int) -> int:
            u = n % USERS
            url = f"/api/flash-sales/{SALE}/{paths[u]}/purchase"
            return (await client.post(url, headers=headers[u])).status_code

        async def health(n: int) -> int:
            return (await client.get("/api/health")).status_code

        for name, call in (("health", health), ("sold_out", sold_out)) * 2:
            print(f"{name}: {await rate(call, seconds, concurrency):,.0f} requests/s")
    consumer.cancel()
    await raffle.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--redis", default=None, help="Redis URL (sessions, stock, limits)")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    asyncio.run(main(args.redis, args.seconds, args.concurrency))
