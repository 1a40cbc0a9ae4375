"""Delivery throughput: N committed outbox messages, drained by `raffle worker` processes
through RabbitMQ into PostgreSQL (2 x 4 shards); sustained deliveries per second.

    .venv/bin/python bench/delivery.py [--messages 20000] [--workers 2] [--split]
        [--postgres-url postgresql://postgres@127.0.0.1:5432/postgres]
        [--rabbitmq-url amqp://guest:guest@127.0.0.1:5672/]

The messages are written straight into the shards (an award record and its outbox message
per win, half CHANCES, half THANKS), so the run times the relay and the consumers alone.
Each worker process runs the relay and the consumers; the databases are dropped at the end
and the queues deleted at the start.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from raffle.bootstrap import Raffle  # noqa: E402
from raffle.domain.draws import Win  # noqa: E402
from raffle.service.delivery import won_message  # noqa: E402
from raffle.settings import Settings  # noqa: E402
from tests.integration.delivery_world import (  # noqa: E402
    ACTIVITY,
    CHANCES,
    STRATEGY,
    THANKS,
    counts,
    delivery_campaign,
    fresh_queues,
    pipeline,
)


async def _admin(url: str, statement: str) -> None:
    engine = create_async_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    async with engine.connect() as connection:
        await connection.execute(text(statement))
    await engine.dispose()


async def write_wins(settings: Settings, messages: int) -> None:
    raffle = await pipeline(settings, delivery_campaign())
    try:
        await write_range(raffle, 0, messages)
    finally:
        await raffle.close()


async def write_range(raffle: Raffle, first: int, last: int) -> None:
    """Wins number `first` to `last` - 1 with their outbox messages, a user's in one
    transaction (2,000 users; odd numbers CHANCES, even THANKS)."""
    now = datetime.now(UTC)
    by_user: dict[str, list[Win]] = {}
    for n in range(first, last):
        user = f"u{n % 2000:05d}"
        award = CHANCES if n % 2 else THANKS
        win = Win(f"{n:024x}", user, ACTIVITY, STRATEGY, award, None, "default", now)
        by_user.setdefault(user, []).append(win)

    async def write(user: str, wins: list[Win]) -> None:
        async with raffle.shards.for_user(user) as uow:
            for win in wins:
                await uow.wins.add(win)
                await uow.outbox.add(won_message(win, now))
            await uow.commit()

    pending = list(by_user.items())
    for i in range(0, len(pending), 20):
        await asyncio.gather(*(write(u, w) for u, w in pending[i : i + 20]))


# seconds, completed, worker CPU s, server CPU s, RabbitMQ's share of it
Sample = tuple[float, int, float, float, float]


async def watch(settings: Settings, messages: int, pids: list[int]) -> tuple[float, list[Sample]]:
    raffle = await pipeline(settings)
    began = time.monotonic()
    samples: list[Sample] = []
    try:
        while True:
            found = await counts(raffle)
            workers = sum(_cpu_seconds(pid) for pid in pids)
            servers, rabbitmq = _servers_cpu(), _servers_cpu(("beam.smp",))
            samples.append((time.monotonic() - began, found.completed, workers, servers, rabbitmq))
            if found.completed >= messages:
                return time.monotonic() - began, samples
            await asyncio.sleep(0.5)
    finally:
        await raffle.close()


def start_workers(settings: Settings, roles: list[list[str]]) -> list[subprocess.Popen[bytes]]:
    env = {**os.environ, **{f"RAFFLE_{k.upper()}": str(v) for k, v in _env(settings).items()}}
    raffle = str(Path(sys.executable).parent / "raffle")
    return [
        subprocess.Popen([raffle, "worker", "--no-jobs", *role], env=env, start_new_session=True)
        for role in roles
    ]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


SERVERS = ("postgres", "beam.smp")  # PostgreSQL's backends, RabbitMQ's Erlang VM


def _servers_cpu(names: tuple[str, ...] = SERVERS) -> float:
    """CPU seconds so far of every PostgreSQL and RabbitMQ process on the machine (or those
    named): other sessions' use of the same servers counts too, and backends that exit are
    lost."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        if text.partition("(")[2].partition(")")[0] in names:
            fields = text.rpartition(")")[2].split()
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _env(settings: Settings) -> dict[str, object]:
    return {
        "database_url": settings.database_url,
        "shard_urls": settings.shard_urls,
        "shard_tables": settings.shard_tables,
        "broker_url": settings.broker_url,
    }


def _report(
    args: argparse.Namespace, seconds: float, samples: list[Sample], cpus: list[float]
) -> dict[str, object]:
    """Rates, and CPU per delivery over the whole run (startup included) and over the
    steady part (from 20 % to 80 % of the messages completed)."""
    n = args.messages
    steady = [s for s in samples if 0.2 * n <= s[1] <= 0.8 * n]
    if len(steady) < 2 or steady[-1][1] == steady[0][1]:
        steady = [samples[0], samples[-1]]
    (t0, done0, w0, s0, r0), (t1, done1, w1, s1, r1) = steady[0], steady[-1]
    delivered = max(1, done1 - done0)
    return {
        "messages": n,
        "workers": args.workers,
        "seconds_to_drain": round(seconds, 1),
        "deliveries_per_second_overall": round(n / seconds),
        "deliveries_per_second_steady": round(delivered / max(t1 - t0, 1e-9)),
        "worker_cpu_ms_per_delivery": round(1000 * sum(cpus) / n, 3),
        "cpu_ms_per_delivery_by_process": [round(1000 * c / n, 3) for c in cpus],
        "steady_worker_cpu_ms_per_delivery": round(1000 * (w1 - w0) / delivered, 3),
        "steady_servers_cpu_ms_per_delivery": round(1000 * (s1 - s0) / delivered, 3),
        "steady_rabbitmq_cpu_ms_per_delivery": round(1000 * (r1 - r0) / delivered, 3),
        "steady_seconds": round(t1 - t0, 1),
        "load_average": os.getloadavg()[0],
    }


@contextlib.asynccontextmanager
async def bench_shards(postgres_url: str, rabbitmq_url: str) -> AsyncIterator[Settings]:
    """Two fresh PostgreSQL databases (4 shard tables each) and empty queues, dropped after."""
    names = [f"raffle_bench_{uuid.uuid4().hex[:8]}_{i}" for i in range(2)]
    urls = [make_url(postgres_url).set(database=n).render_as_string(False) for n in names]
    for name in names:
        await _admin(postgres_url, f"CREATE DATABASE {name}")
    try:
        await fresh_queues(rabbitmq_url)
        yield Settings(
            database_url=urls[0], shard_urls=urls[1], shard_tables=4, broker_url=rabbitmq_url
        )
    finally:
        for name in names:
            await _admin(postgres_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def main(args: argparse.Namespace) -> None:
    processes: list[subprocess.Popen[bytes]] = []
    async with bench_shards(args.postgres_url, args.rabbitmq_url) as settings:
        try:
            began = time.monotonic()
            await write_wins(settings, args.messages)
            took = time.monotonic() - began
            print(f"wrote {args.messages:,} wins in {took:.1f}s", file=sys.stderr)
            roles = [[]] * args.workers  # each worker relays and consumes
            if args.split:
                roles = [["--no-consumers"], *[["--no-relay"]] * args.workers]
            processes = start_workers(settings, roles)
            seconds, samples = await watch(settings, args.messages, [p.pid for p in processes])
            cpus = [_cpu_seconds(p.pid) for p in processes]
            print(json.dumps(_report(args, seconds, samples, cpus)))
        finally:
            for process in processes:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--split", action="store_true", help="one relay-only process + WORKERS consumer-only"
    )
    parser.add_argument(
        "--postgres-url", default="postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
    )
    parser.add_argument("--rabbitmq-url", default="amqp://guest:guest@127.0.0.1:5672/")
    asyncio.run(main(parser.parse_args()))
