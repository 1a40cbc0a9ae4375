"""A platform draw of 100 winners among 1,000,000 entrants: seconds and peak memory.

    .venv/bin/python -m bench.platform_draw [--entrants 1000000] [--winners 100]
        [--prizes 1] [--excluded-every 0] [--runs 3] [--database-url sqlite:///PATH]

Times the two steps the scheduled-draw job does: the entrant list's hash at the cutoff (the
sorted ids a page at a time) and the pick at the draw time (HMAC-SHA256 stream, sparse
Fisher–Yates, the entrants asked for by position). In process by default: the ids are made
from their positions, so what is measured is the draw's own work and memory. With
`--database-url` (a new, empty database) the entrants are written to it first and the job's
own steps run (`Scheduler.freeze`, `Scheduler.pick`: pages read from the database).
Each step runs twice: timed untraced, then under tracemalloc for its peak of Python
allocations (tracing slows allocation several times over, so the two are apart).
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import time
import tracemalloc
from collections.abc import Callable, Iterator
from functools import partial
from typing import TypeVar

from raffle.domain.scheduled import EntrantHash, Terms, picking

PAGE = 10_000  # ids a page, as the job reads them
T = TypeVar("T")


def entrant(position: int) -> str:
    return f"user{position:08d}"


def pages(count: int) -> Iterator[list[str]]:
    for start in range(0, count, PAGE):
        yield [entrant(p) for p in range(start, min(count, start + PAGE))]


def measured(step: Callable[[], T]) -> tuple[T, float, int]:
    """The step's answer, its seconds untraced, and its peak under tracemalloc."""
    started = time.perf_counter()
    answer = step()
    seconds = time.perf_counter() - started
    tracemalloc.start()
    step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return answer, seconds, peak


def frozen(count: int) -> str:
    found = EntrantHash()
    for page in pages(count):
        found.add(page)
    return found.hexdigest()


def drawn(terms: Terms, seed: bytes, excluded_every: int) -> int:
    steps = picking(terms, seed)
    try:
        asked = next(steps)
        while True:
            asked = steps.send(
                [(entrant(p), not excluded_every or p % excluded_every != 0) for p in asked]
            )
    except StopIteration as done:
        return len(done.value)


async def on_database(url: str, entrants: int, winners: int, runs: int) -> None:
    from datetime import UTC, datetime, timedelta
    from decimal import Decimal

    from raffle.adapters.sql.migrate import upgrade
    from raffle.adapters.sql.tables.scheduled import scheduled_entrant
    from raffle.bootstrap import bootstrap
    from raffle.domain.activity import Activity, ActivityState
    from raffle.domain.awards import Award, AwardKind
    from raffle.domain.campaign import Campaign
    from raffle.domain.scheduled import scheduled
    from raffle.domain.strategy import Fallback, Strategy, StrategyPrize
    from raffle.service.campaigns import load_campaign
    from raffle.service.scheduled import Scheduler, published
    from raffle.settings import Settings

    now = datetime.now(UTC)
    settings = Settings(database_url=url)
    await upgrade(settings.database_url)
    raffle = bootstrap(settings)
    strategy = Strategy(2, (StrategyPrize(3, Decimal("0.1")),), Fallback(4), ())
    activity = Activity(
        1, "bench", 2, now - timedelta(days=1), now + timedelta(days=1),
        state=ActivityState.RUNNING, schedule=scheduled(now + timedelta(hours=1), winners),
    )  # fmt: skip
    awards = (Award(3, AwardKind.PHYSICAL, "prize"), Award(4, AwardKind.THANKS, "thanks"))
    await load_campaign(Campaign(awards, (strategy,), (), (activity,)), raffle.uow())
    started = time.perf_counter()
    async with raffle.engines[0].begin() as connection:
        for page in pages(entrants):
            rows = [{"activity_id": 1, "user_id": u, "entered_at": now} for u in page]
            await connection.execute(scheduled_entrant.insert(), rows)
    print(f"{entrants:,} entrants written in {time.perf_counter() - started:.1f} s")
    jobs = Scheduler(raffle.uow, raffle.catalogue, raffle.shards, raffle.clock)
    await published(activity, uow=raffle.uow)
    # Again after the first run: the close and the winners' record are then no-ops (set
    # once), the reading, the hashing and the pick are done in full. The last run is traced.
    for run in range(1, runs + 2):
        traced = run == runs + 1
        if traced:
            tracemalloc.start()
        started = time.perf_counter()
        await jobs.freeze(activity, now)
        hashed = time.perf_counter() - started
        hash_peak = tracemalloc.get_traced_memory()[1] if traced else 0
        if traced:
            tracemalloc.reset_peak()
        async with raffle.uow() as uow:
            draw = await uow.scheduled.get(1)
        assert draw is not None
        started = time.perf_counter()
        await jobs.pick(activity, draw, now)
        picked = time.perf_counter() - started
        if traced:
            pick_peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            print(
                f"traced: peak {hash_peak / 2**20:.1f} MiB reading and hashing, "
                f"{pick_peak / 2**20:.1f} MiB picking"
            )
        else:
            print(
                f"run {run}: list read and hashed in {hashed:.2f} s; {winners} winners picked "
                f"in {picked:.2f} s"
            )
    await raffle.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=1_000_000)
    parser.add_argument("--winners", type=int, default=100, help="winners per prize")
    parser.add_argument("--prizes", type=int, default=1)
    parser.add_argument("--excluded-every", type=int, default=0, help="skip every k-th entrant")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--database-url", help="a new, empty database to run the job's steps on")
    args = parser.parse_args()
    if args.database_url:
        asyncio.run(on_database(args.database_url, args.entrants, args.winners, args.runs))
        return
    for run in range(1, args.runs + 1):
        digest, hash_s, hash_peak = measured(lambda: frozen(args.entrants))
        prizes = tuple((award, args.winners) for award in range(1, args.prizes + 1))
        terms = Terms(1, prizes, 1, args.entrants, digest)
        seed = secrets.token_bytes(32)
        winners, pick_s, pick_peak = measured(partial(drawn, terms, seed, args.excluded_every))
        print(
            f"run {run}: {args.entrants:,} entrants hashed in {hash_s:.2f} s "
            f"(peak {hash_peak / 2**20:.1f} MiB); {winners} winners picked in "
            f"{pick_s * 1000:.1f} ms (peak {pick_peak / 2**10:.0f} KiB)"
        )


if __name__ == "__main__":
    main()
