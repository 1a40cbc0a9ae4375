"""CPU per command of the shared Redis pipeline (adapters/redis_pipeline.py), as the draw
sends them: GETEX of a session and EVALSHA of a rate-limit-like script, IN_FLIGHT callers
at once. Run against main's src with PYTHONPATH to compare.

    .venv/bin/python bench/redis_pipeline.py --url redis://127.0.0.1:6379/0
"""

from __future__ import annotations

import argparse
import asyncio
import time

from redis.asyncio import Redis

from raffle.adapters.redis_pipeline import LuaScript, SharedPipeline

_HIT = LuaScript("redis.call('INCR', KEYS[1]) return redis.call('PTTL', KEYS[1])")


async def _measure(url: str, callers: int, rounds: int) -> None:
    redis = Redis.from_url(url)
    commands = SharedPipeline(redis)
    await redis.set("bench:pipeline:session", b"x" * 120)
    await redis.script_load(_HIT.body)

    async def caller(n: int) -> None:
        for _ in range(rounds):
            await commands.execute("GETEX", "bench:pipeline:session", "EX", 3600)
            await commands.run(_HIT, [f"bench:pipeline:{n}"], [60000, 5])

    await asyncio.gather(*(caller(n) for n in range(callers)))  # warm up
    sent, trips = commands.commands, commands.round_trips
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(caller(n) for n in range(callers)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    count = commands.commands - sent
    print(
        f"{count} commands, {count / (commands.round_trips - trips):.1f} a round trip: "
        f"{cpu / count * 1e6:.1f} us CPU a command, {count / wall:,.0f} commands/s"
    )
    await redis.delete(*[f"bench:pipeline:{n}" for n in range(callers)])
    await redis.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--callers", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    for _ in range(3):
        asyncio.run(_measure(args.url, args.callers, args.rounds))


if __name__ == "__main__":
    main()
