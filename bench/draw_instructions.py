"""Instructions a draw costs through the whole app in one process, counted by callgrind.

Run: python -m bench.draw_instructions [--draws 200] [--postgres [--concurrency 64]]
(from the repository root; needs valgrind, its headers and a C compiler: Debian's valgrind and
gcc; --postgres also PostgreSQL's and Redis's binaries)

The embedded default (a SQLite file, in-process stock) serves `POST /api/activities/{id}/draws`
of bench/campaign.yaml through httpx's ASGI transport, one draw at a time, 50 players in
turn. The database is made first (migrations, the campaign, the players' sessions), outside
valgrind; then the app runs under `valgrind --tool=callgrind --instr-atstart=no` and counts
only the `--draws` after its warm-up: a three-line C library of callgrind's client requests,
compiled here, turns the counting on and off. Instructions do not move with other load on
the machine, as wall and CPU time do, so two commits compare on a shared machine (run the
same script with PYTHONPATH on each commit's `src`).

`--postgres` serves the same draws on PostgreSQL 2 x 4 shards + Redis, as `bench/http.py
--backend postgres` does, on throwaway servers (tests/services.py) outside valgrind: only the
app's process is counted. `--concurrency N` sends N draws at once (the HTTP bench keeps 64 in
flight: they share batches), each of another player.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

PLAYERS = 50  # and at least twice the concurrency
ACTIVITY = 990101
COUNTING = """#include <valgrind/callgrind.h>
void start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
"""


def _services(folder: Path) -> dict[str, str]:
    """Where the app's data lives: RAFFLE_* settings (folder/services.json when --postgres)."""
    chosen = folder / "services.json"
    if chosen.exists():
        return dict(json.loads(chosen.read_text()))
    return {"RAFFLE_DATABASE_URL": f"sqlite:///{folder / 'raffle.db'}"}


def _settings(folder: Path):  # type: ignore[no-untyped-def]
    from raffle.settings import Settings

    services = _services(folder)
    chosen = {
        "database_url": services["RAFFLE_DATABASE_URL"],
        "shard_urls": services.get("RAFFLE_SHARD_URLS", ""),
        "shard_tables": int(services.get("RAFFLE_SHARD_TABLES", "1")),
        "redis_url": services.get("RAFFLE_REDIS_URL"),
        "draws_per_second": 1_000_000,
        "log_level": "warning",  # as bench/http.py serves: no line per request
        "catalogue_ttl_seconds": 3600,  # see draws()
        "profile_ttl_seconds": 3600,
    }
    # An older commit's settings may lack some (no log level before structured logs).
    return Settings(**{k: v for k, v in chosen.items() if k in Settings.model_fields})


def _cli(folder: Path, *argv: str) -> None:
    """`raffle ARGV` of the checkout on PYTHONPATH: each commit migrates and loads its own way."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAFFLE_")}
    env.update(_services(folder), RAFFLE_LOAD_DEMO="false")
    call = "from raffle.entrypoints.cli import main; main()"
    subprocess.run([sys.executable, "-c", call, *argv], env=env, check=True, capture_output=True)


async def prepare(folder: Path, players: int) -> None:
    """The database the counted runs use: migrated, the campaign loaded, players' sessions."""
    import raffle as package
    from raffle.bootstrap import bootstrap
    from raffle.domain.users import Session
    from raffle.service.auth import token_hash

    # The campaign beside the code on PYTHONPATH (src/raffle -> bench/campaign.yaml).
    campaign = Path(package.__file__).parents[2] / "bench" / "campaign.yaml"
    _cli(folder, "migrate")
    _cli(folder, "load", str(campaign))
    raffle = bootstrap(_settings(folder))
    tokens = []
    for i in range(players):
        token = secrets.token_urlsafe(32)
        at = datetime.now(UTC) + timedelta(hours=1)
        await raffle.sessions.create(Session(f"player{i}", False, at), token_hash(token), 3600)
        tokens.append(token)
    await raffle.close()
    (folder / "tokens").write_text("\n".join(tokens))


def _quiet() -> None:
    """The news of switches, tags, deny lists and flash sales heard once an hour, not every
    0.5 s (no Redis) or 5 s: under callgrind those looks, not the draws, would fill the count,
    and more of them the busier the machine (the wall time a draw takes). At thousands of
    draws a second they are nothing a draw."""
    try:
        from raffle.adapters import switch_news
    except ImportError:  # a commit from before the switches
        return
    switch_news.PolledSwitchNews.__init__.__defaults__ = (3600.0,)
    switch_news.RedisSwitchNews.__init__.__kwdefaults__["check_every"] = 3600.0


async def draws(folder: Path, count: int, concurrency: int, counting: ctypes.CDLL) -> None:
    import httpx

    from raffle.bootstrap import bootstrap
    from raffle.entrypoints.http.app import create_app

    _quiet()
    settings = _settings(folder)
    with contextlib.suppress(ImportError):  # structured logs, since 8c8526b
        from raffle.entrypoints import logs

        logs.configure(settings, sys.stderr)
    raffle = bootstrap(settings)
    # Under callgrind a draw takes ~0.5 s: caches kept a second would be read again every
    # other draw, which no draw does at thousands a second. Kept an hour, they count once.
    # A commit from before verifiable draws (to weigh what receipts cost) has no seeds.
    if hasattr(raffle, "seeds"):
        from raffle.service.fairness import SeedBook

        raffle.seeds = SeedBook(raffle.uow, ttl=3600)
    tokens = (folder / "tokens").read_text().split()
    app = create_app(raffle, scheduler=False)
    path = f"/api/activities/{ACTIVITY}/draws"
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as client,
    ):

        async def draw(n: int) -> None:
            headers = {"Authorization": f"Bearer {tokens[n % len(tokens)]}"}
            answer = await client.post(path, headers={**headers, "Idempotency-Key": str(n)})
            assert answer.status_code == 201, answer.text

        async def wave(first: int, size: int) -> None:
            await asyncio.gather(*(draw(n) for n in range(first, first + size)))

        # Warm-up: every player's first visit, catalogue, seeds and statement caches filled.
        warm = len(tokens)
        for first in range(0, warm, concurrency):
            await wave(first, min(concurrency, warm - first))
        counting.start()
        for first in range(warm, warm + count, concurrency):
            await wave(first, min(concurrency, warm + count - first))
        counting.stop()
    await raffle.close()


def counted(folder: Path, count: int, concurrency: int) -> int:
    """Instructions of `count` draws after the warm-up, under callgrind."""
    source = folder / "counting.c"
    source.write_text(COUNTING)
    library = folder / "counting.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", library, source], check=True)
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=/dev/null",
         sys.executable, "-m", "bench.draw_instructions", "--inner", str(count),
         "--concurrency", str(concurrency), "--folder", folder],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    found = re.search(r"Collected : (\d+)", done.stderr)
    assert found, done.stderr[-2000:]
    return int(found.group(1))


class Profiled:
    """cProfile in place of callgrind's counting: which functions the counted draws call."""

    def __init__(self, target: Path) -> None:
        import cProfile

        self.target, self.profile = target, cProfile.Profile()

    def start(self) -> None:
        self.profile.enable()

    def stop(self) -> None:
        self.profile.disable()
        self.profile.dump_stats(self.target)


def postgres(folder: Path, stack: contextlib.ExitStack) -> None:
    """Throwaway PostgreSQL (two databases, 4 tables a shard) and Redis, as --backend postgres."""
    sys.path.insert(0, str(Path(__file__).parents[1]))
    from tests.services import PostgresServer, RedisServer

    database, redis = PostgresServer(), RedisServer()
    for server in (database, redis):
        server.start()
        stack.callback(server.close)
    subprocess.run(database._sql("CREATE DATABASE raffle_1"), check=True, capture_output=True)
    services = {
        "RAFFLE_DATABASE_URL": database.url,
        "RAFFLE_SHARD_URLS": database.url.rsplit("/", 1)[0] + "/raffle_1",
        "RAFFLE_SHARD_TABLES": "4",
        "RAFFLE_REDIS_URL": redis.url,
    }
    (folder / "services.json").write_text(json.dumps(services))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL 2 x 4 + Redis")
    parser.add_argument("--concurrency", type=int, default=1, help="draws sent at once")
    parser.add_argument(
        "--profile", type=Path, help="no callgrind: cProfile's stats of the draws to this file"
    )
    parser.add_argument("--inner", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner is not None:
        counting = ctypes.CDLL(str(args.folder / "counting.so"))
        asyncio.run(draws(args.folder, args.inner, args.concurrency, counting))
        return
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        if args.postgres:
            postgres(Path(folder), stack)
        asyncio.run(prepare(Path(folder), max(PLAYERS, 2 * args.concurrency)))
        if args.profile is not None:
            profiled = Profiled(args.profile)
            asyncio.run(draws(Path(folder), args.draws, args.concurrency, profiled))  # type: ignore[arg-type]
            print(f"{args.profile}: cProfile's stats of {args.draws} draws")
            return
        total = counted(Path(folder), args.draws, args.concurrency)
    where = "PostgreSQL 2 x 4 + Redis" if args.postgres else "embedded"
    print(
        f"{total / args.draws:,.0f} instructions a draw ({args.draws} draws, {where}, "
        f"{args.concurrency} at once)"
    )


if __name__ == "__main__":
    main()
