"""Profiles: rows imported a second (first import, then the same file again), and profile reads
a second through the per-process cache against reads from the database.

    .venv/bin/python bench/profiles.py                                  # a temporary SQLite file
    .venv/bin/python bench/profiles.py --database-url postgresql://...  # an empty database

Figures go to bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from raffle.adapters.clock import SystemClock
from raffle.adapters.phones import PhoneBook
from raffle.adapters.profile_file import read_profiles
from raffle.adapters.profile_news import PolledProfileNews
from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.profiles import Profile
from raffle.service.profile_cache import CachedProfiles
from raffle.service.profile_import import import_profiles
from raffle.service.profiles import ProfileCare
from raffle.settings import Settings


async def main(url: str, rows: int, reads: int) -> None:
    url = Settings(database_url=url).database_url  # the async driver of the URL's database
    await upgrade(url)
    engine = create_engine(url)

    async def read(user_id: str) -> Profile | None:
        async with SqlUnitOfWork(engine) as uow:
            return await uow.profiles.get(user_id)

    async def version() -> int:
        async with SqlUnitOfWork(engine) as uow:
            return await uow.profiles.version()

    cache = CachedProfiles(read, PolledProfileNews(version), ttl=3600)  # not watched
    care = ProfileCare(lambda: SqlUnitOfWork(engine), PhoneBook("CN"), cache, SystemClock())
    text = "user_id,phone,level,gender,birth_date,region,attr.vip,attr.score\n" + "".join(
        f"b{n:07d},138{n:08d},{n % 10},{'fm'[n % 2]},1990-05-17,r{n % 30},true,{n}\n"
        for n in range(rows)
    )
    parsed = read_profiles(text, "csv")
    for label in ("import", "import again"):
        started = time.perf_counter()
        report = await import_profiles(parsed, care)
        seconds = time.perf_counter() - started
        print(f"{label}: {rows} rows in {seconds:.2f} s: {rows / seconds:,.0f} rows/s "
              f"({report.created} created, {report.unchanged} unchanged)")  # fmt: skip
    users = [f"b{n % rows:07d}" for n in range(reads)]
    started = time.perf_counter()
    for user in users[: reads // 10]:
        await read(user)
    database = (reads // 10) / (time.perf_counter() - started)
    for user in users:
        await cache.of(user)  # warm
    started = time.perf_counter()
    for user in users:
        await cache.of(user)
    cached = reads / (time.perf_counter() - started)
    print(f"reads: {database:,.0f}/s from the database, {cached:,.0f}/s kept in the process")
    await engine.dispose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--reads", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'bench.db'}"
        asyncio.run(main(url, args.rows, args.reads))
