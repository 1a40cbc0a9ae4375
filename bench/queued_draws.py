"""Queued draws per second through RabbitMQ into PostgreSQL (2 x 4 shards): N tickets from U
users accepted (committed, published, confirmed), then drained by one consumer in acceptance
order; the acceptance rate, the drain rate, and the drain's time inside the draw use case.

    .venv/bin/python bench/queued_draws.py [--tickets 5000] [--users 500] [--batch 200]

Throwaway PostgreSQL (tests/services.py, fsync off) and RabbitMQ servers are started and
removed; stock in the process (no Redis), as the crash test runs it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
# Python puts this file's folder first on sys.path, where bench/http.py would shadow the
# standard library's `http`.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != BENCH]

from raffle.adapters.sql.migrate import upgrade  # noqa: E402
from raffle.bootstrap import Raffle, bootstrap  # noqa: E402
from raffle.domain.activity import Activity, ActivityState  # noqa: E402
from raffle.domain.awards import Award, AwardKind  # noqa: E402
from raffle.domain.campaign import Campaign  # noqa: E402
from raffle.domain.quota import QuotaPack  # noqa: E402
from raffle.domain.strategy import Exhaustion, Fallback, Strategy, StrategyPrize  # noqa: E402
from raffle.domain.tickets import QUEUED  # noqa: E402
from raffle.service.campaigns import load_campaign  # noqa: E402
from raffle.service.draw import Draw  # noqa: E402
from raffle.service.ports import DrawResult  # noqa: E402
from raffle.service.queued_drawing import TicketDrawer  # noqa: E402
from raffle.service.queued_draws import accept  # noqa: E402
from raffle.settings import Settings  # noqa: E402
from tests.services import PostgresServer, RabbitMQServer  # noqa: E402

ACTIVITY = 1


def _campaign(chances: int) -> Campaign:
    now = datetime.now(UTC)
    strategy = Strategy(
        10, (StrategyPrize(2, Decimal("0.3"), stock=10**6),), Fallback(1), (), Exhaustion.FALLBACK
    )
    activity = Activity(
        ACTIVITY, "queued", 10, now - timedelta(days=1), now + timedelta(days=1),
        state=ActivityState.RUNNING, welcome_pack=21, queued=True,
    )  # fmt: skip
    awards = (Award(1, AwardKind.THANKS, "thanks"), Award(2, AwardKind.PHYSICAL, "lamp"))
    return Campaign(awards, (strategy,), (QuotaPack(21, chances, chances, chances),), (activity,))


async def _accepting(raffle: Raffle, tickets: int, users: int) -> float:
    each = -(-tickets // users)
    done = [0]

    async def one_user(n: int) -> None:
        for _ in range(each):
            await accept(
                Draw(f"u{n:05d}", ACTIVITY), catalogue=raffle.catalogue, config=raffle.uow,
                broker=raffle.broker, clock=raffle.clock, queue=raffle.queue(),
            )  # fmt: skip
            done[0] += 1

    async def progress() -> None:
        while True:
            await asyncio.sleep(5)
            print(f"  {done[0]} accepted", file=sys.stderr, flush=True)

    started = time.perf_counter()
    showing = asyncio.create_task(progress())
    await asyncio.gather(*(one_user(n) for n in range(users)))
    showing.cancel()
    return each * users / (time.perf_counter() - started)


async def _draining(raffle: Raffle, tickets: int) -> tuple[float, float]:
    plain = raffle.ticket_drawer()
    inside = [0.0]

    async def timed(cmd: Draw) -> DrawResult:
        started = time.perf_counter()
        try:
            return await plain.draw(cmd)
        finally:
            inside[0] += time.perf_counter() - started

    drawer = TicketDrawer(plain.config, timed, plain.batch)

    async def consume() -> None:  # started again when it fails, as the worker does
        while True:
            try:
                await raffle.broker.consume(QUEUED, drawer.handle)
            except Exception as error:
                print(f"the consumer failed ({error!r}); starting it again", file=sys.stderr)
                await asyncio.sleep(1)

    started = time.perf_counter()
    consuming = asyncio.create_task(consume())
    try:
        while True:
            async with raffle.uow() as uow:
                if await uow.tickets.drawn_upto(ACTIVITY) >= tickets:
                    break
            await asyncio.sleep(0.05)
    finally:
        consuming.cancel()
        await asyncio.gather(consuming, return_exceptions=True)
    seconds = time.perf_counter() - started
    return tickets / seconds, inside[0] / seconds


async def run(database: str, shards: str, broker: str, args: argparse.Namespace) -> None:
    for url in (database, shards):
        await upgrade(url, shard_tables=4)
    settings = Settings(
        database_url=database, shard_urls=shards, shard_tables=4, broker_url=broker,
        queue_batch=args.batch, queue_bound=10**7,
    )  # fmt: skip
    raffle = bootstrap(settings)
    try:
        await load_campaign(_campaign(-(-args.tickets // args.users)), raffle.uow())
        await raffle.start()
        accepted = await _accepting(raffle, args.tickets, args.users)
        print(f"accepted (committed, published, confirmed): {accepted:,.0f}/s", flush=True)
        drained, share = await _draining(raffle, args.tickets)
        print(f"drawn in order by one consumer:             {drained:,.0f}/s")
        print(f"the drain's time inside the draw use case:  {share:.0%}")
    finally:
        await raffle.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tickets", type=int, default=5000)
    parser.add_argument("--users", type=int, default=500)
    parser.add_argument("--batch", type=int, default=200)
    args = parser.parse_args()
    first, second, rabbit = PostgresServer(), PostgresServer(), RabbitMQServer()
    servers = (first, second, rabbit)
    try:
        for server in servers:
            server.start()
        asyncio.run(run(first.url, second.url, rabbit.url, args))
    finally:
        for server in servers:
            server.close()


if __name__ == "__main__":
    main()
