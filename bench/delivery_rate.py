"""Delivery under a steady offered load: wins written at RATE a second for SECONDS while
`raffle worker` processes (RELAYS relays + WORKERS consumers) drain them through RabbitMQ into
PostgreSQL (2 x 4 shards); does the backlog (written, not yet delivered) stay flat?

    .venv/bin/python bench/delivery_rate.py [--rate 3000] [--seconds 30] [--workers 2]
        [--relays 1]

The wins are written straight into the shards (award record + outbox message, a user's in
one transaction, as the draw commits them; half CHANCES, half THANKS) by this process, which
thereby takes CPU the draws would. Prints one JSON line: the rate offered and delivered, the
backlog over time, the time to drain once writing stopped, CPU per delivery.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.delivery import (  # noqa: E402
    _cpu_seconds,
    _servers_cpu,
    bench_shards,
    start_workers,
    write_range,
)

from raffle.bootstrap import Raffle  # noqa: E402
from raffle.settings import Settings  # noqa: E402
from tests.integration.delivery_world import (  # noqa: E402
    counts,
    delivery_campaign,
    pipeline,
)

TICK = 0.05  # seconds between writes: at 3,000/s, 150 wins a write
DRAIN_LIMIT = 120.0  # seconds to wait for the backlog to drain after writing stopped

# seconds, written, delivered, worker CPU s, server CPU s
Sample = tuple[float, int, int, float, float]


async def offer(raffle: Raffle, rate: float, seconds: float, written: list[int]) -> None:
    """Write wins so that `rate * elapsed` have been written at every tick (catching up when
    a write took longer than a tick)."""
    began = time.monotonic()
    while (elapsed := time.monotonic() - began) < seconds:
        due = int(rate * elapsed)
        if due > written[0]:
            await write_range(raffle, written[0], due)
            written[0] = due
        await asyncio.sleep(TICK)


async def sample(raffle: Raffle, began: float, written: list[int], pids: list[int]) -> Sample:
    delivered = (await counts(raffle)).completed
    workers = sum(_cpu_seconds(pid) for pid in pids)
    return (time.monotonic() - began, written[0], delivered, workers, _servers_cpu())


async def run(args: argparse.Namespace, settings: Settings) -> dict[str, object]:
    writer = await pipeline(settings, delivery_campaign())
    watcher = await pipeline(settings)
    roles = [*[["--no-consumers"]] * args.relays, *[["--no-relay"]] * args.workers]
    processes = start_workers(settings, roles)
    pids = [p.pid for p in processes]
    try:
        await asyncio.sleep(3)  # the workers start (imports, connections)
        written = [0]
        began = time.monotonic()
        writing = asyncio.create_task(offer(writer, args.rate, args.seconds, written))
        samples: list[Sample] = []
        while not writing.done():
            samples.append(await sample(watcher, began, written, pids))
            await asyncio.sleep(0.5)
        await writing
        stopped = await sample(watcher, began, written, pids)
        last = stopped
        while last[2] < last[1] and last[0] - stopped[0] < DRAIN_LIMIT:
            await asyncio.sleep(0.5)
            last = await sample(watcher, began, written, pids)
        return _report(args, [*samples, stopped], last)
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(10)
        await writer.close()
        await watcher.close()


def _report(args: argparse.Namespace, samples: list[Sample], last: Sample) -> dict[str, object]:
    """The second half of the writing is the steady part: rates, backlog growth and CPU there."""
    stopped = samples[-1]
    half = next(s for s in samples if s[0] >= stopped[0] / 2)
    span = stopped[0] - half[0]
    delivered = max(1, stopped[2] - half[2])
    # Written wins are counted once their transaction returned: a moment behind.
    backlog = [(round(s[0], 1), max(0, s[1] - s[2])) for s in samples]
    return {
        "rate_asked": args.rate,
        "seconds_writing": round(stopped[0], 1),
        "offered_per_second": round(stopped[1] / stopped[0]),
        "offered_per_second_second_half": round((stopped[1] - half[1]) / span),
        "delivered_per_second_second_half": round(delivered / span),
        "backlog_growth_per_second_second_half": round(
            ((stopped[1] - stopped[2]) - (half[1] - half[2])) / span
        ),
        "backlog_max": max(b for _, b in backlog),
        "backlog_at_end_of_writing": stopped[1] - stopped[2],
        "backlog_every_2s": backlog[::4],
        "seconds_to_drain_after_writing": round(last[0] - stopped[0], 1),
        "drained": last[2] >= last[1],
        "worker_cpu_ms_per_delivery_second_half": round(
            1000 * (stopped[3] - half[3]) / delivered, 3
        ),
        "servers_cpu_ms_per_delivery_second_half": round(
            1000 * (stopped[4] - half[4]) / delivered, 3
        ),
        "load_average": os.getloadavg()[0],
    }


async def main(args: argparse.Namespace) -> None:
    async with bench_shards(args.postgres_url, args.rabbitmq_url) as settings:
        print(json.dumps(await run(args, settings)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=3000.0, help="wins written a second")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long wins are written")
    parser.add_argument("--workers", type=int, default=2, help="consumer processes")
    parser.add_argument("--relays", type=int, default=1, help="relay processes")
    parser.add_argument(
        "--postgres-url", default="postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
    )
    parser.add_argument("--rabbitmq-url", default="amqp://guest:guest@127.0.0.1:5672/")
    asyncio.run(main(parser.parse_args()))
