"""The winners' feed: first pages a second read from the shards, against the per-process kept
page, and pages deep behind a cursor, on an activity with many wins (half of them "thanks").

    .venv/bin/python -m bench.feed                                  # a temporary SQLite file, 1 x 4
    .venv/bin/python -m bench.feed --database-url postgresql://...  # an empty database, 1 x 4

As a module: run as a file, bench/http.py would stand in for the standard library's `http`.

Figures go to bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import text

from raffle.adapters.campaign_file import parse_campaign
from raffle.adapters.sql.migrate import upgrade
from raffle.bootstrap import bootstrap
from raffle.domain.draws import Win, WinState
from raffle.service.campaigns import load_campaign
from raffle.service.winners_feed import FeedCache, winners
from raffle.settings import Settings

TABLES = 4
ACTIVITY, STRATEGY, PRIZE, THANKS = 1, 10, 2, 1
CAMPAIGN = f"""
awards:
  - {{id: {THANKS}, kind: thanks, title: thanks}}
  - {{id: {PRIZE}, kind: physical, title: lamp}}
strategies:
  - {{id: {STRATEGY}, fallback: {THANKS}, prizes: [{{award: {PRIZE}, rate: 0.5}}]}}
activities:
  - {{id: {ACTIVITY}, name: feed, strategy: {STRATEGY}, begin_at: 2026-01-01T00:00:00+08:00,
     end_at: 2030-01-01T00:00:00+08:00, state: running, show_winning_list: ticker}}
"""


async def main(url: str, rows: int, reads: int) -> None:
    settings = Settings(database_url=url, shard_tables=TABLES)
    await upgrade(settings.database_url, shard_tables=TABLES)
    raffle = bootstrap(settings)
    await load_campaign(parse_campaign(CAMPAIGN, "feed"), raffle.uow())
    start = int(time.time() * 1000) - rows
    for chunk in range(0, rows, 1000):
        wins = [
            Win(f"{start + n:012x}{secrets.randbits(47):012x}", f"user{n}", ACTIVITY, STRATEGY,
                PRIZE if n % 2 else THANKS, None, "default",
                datetime.fromtimestamp((start + n) / 1000, UTC), WinState.CREATE)
            for n in range(chunk, min(chunk + 1000, rows))
        ]  # fmt: skip
        by_shard: dict[int, list[Win]] = {}
        for w in wins:
            by_shard.setdefault(raffle.shards.index(w.user_id), []).append(w)
        for ws in by_shard.values():
            async with raffle.shards.for_user(ws[0].user_id) as uow:
                for w in ws:
                    await uow.wins.add(w)
                await uow.commit()
    for engine in raffle.engines:  # the statistics autovacuum would gather by then
        async with engine.begin() as connection:
            await connection.execute(text("ANALYZE"))
    kwargs = {"catalogue": raffle.catalogue, "shards": raffle.shards}

    async def first() -> object:
        return await winners(ACTIVITY, None, None, 10, **kwargs)  # type: ignore[arg-type]

    cache = FeedCache(ttl=3600)
    rates: dict[str, float] = {}
    page = await winners(ACTIVITY, None, None, 50, **kwargs)  # type: ignore[arg-type]
    for _ in range(rows // 2 // 50 // 2):  # half way down: a deep cursor
        page = await winners(ACTIVITY, page.next, None, 50, **kwargs)  # type: ignore[arg-type]
    deep = page.next

    async def behind() -> object:
        return await winners(ACTIVITY, deep, None, 10, **kwargs)  # type: ignore[arg-type]

    async def kept() -> object:
        return await cache.first(ACTIVITY, 10, first)  # type: ignore[arg-type]

    for label, read in (("first page, from the shards", first), ("deep page (cursor)", behind),
                        ("first page, kept", kept)):  # fmt: skip
        started = time.perf_counter()
        for _ in range(reads):
            await read()
        rates[label] = reads / (time.perf_counter() - started)
        print(f"{label}: {rates[label]:,.0f} pages/s")
    base = rates["first page, from the shards"]
    print(f"kept / from the shards: {rates['first page, kept'] / base:,.0f}x; "
          f"deep / first: {rates['deep page (cursor)'] / base:.2f}x")  # fmt: skip
    await raffle.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--rows", type=int, default=100_000, help="award records (half wins)")
    parser.add_argument("--reads", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'feed.db'}"
        asyncio.run(main(url, args.rows, args.reads))
