"""A platform draw of 100 winners among 1,000,000 entrants: seconds and peak memory.

    .venv/bin/python bench/platform_draw.py [--entrants 1000000] [--winners 100]
        [--prizes 1] [--excluded-every 0] [--runs 3]

Times the two steps the scheduled-draw job does in process: the entrant list's hash at the
cutoff (the sorted ids fed a page at a time, as the job reads them) and the pick at the draw
time (HMAC-SHA256 stream, sparse Fisher–Yates, the entrants asked for by position). The ids
are made from their positions, so what is measured is the draw's own memory, not a list's.
Each step runs twice: timed untraced, then under tracemalloc for its peak of Python
allocations (tracing slows allocation several times over, so the two are apart).
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from raffle.domain.scheduled import EntrantHash, Terms, picking  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=1_000_000)
    parser.add_argument("--winners", type=int, default=100, help="winners per prize")
    parser.add_argument("--prizes", type=int, default=1)
    parser.add_argument("--excluded-every", type=int, default=0, help="skip every k-th entrant")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
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
