"""Instructions a draw costs through the whole app in one process, counted by callgrind.

Run: python -m bench.draw_instructions [--draws 200] [--postgres [--concurrency 64]]
[--activity 990103]
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
import socket
import subprocess
import sys
import tempfile
from collections.abc import Coroutine
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

PLAYERS = 50  # and at least twice the concurrency
# --activity 990103: the one with two policies and a dynamic tag (passed on to the server and
# client processes in the environment)
ACTIVITY = int(os.environ.get("BENCH_DRAW_ACTIVITY", "990101"))
REFUSALS = 990102  # --activity 990102: a welcome pack of one chance, so the draws are refused
HEALTH = os.environ.get("BENCH_HEALTH") == "1"  # --health: GET /api/health counted instead
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


class Counting(Protocol):
    """Callgrind's client requests (the compiled library), or cProfile's switch."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


def _served_loop(work: Coroutine[Any, Any, None]) -> None:
    """On uvloop, as `raffle serve` runs (and 8c8526b's too)."""
    import uvloop

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(work)


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


async def draws(folder: Path, count: int, concurrency: int, counting: Counting) -> None:
    """The app served by uvicorn on a loopback port, as `raffle serve` serves it; the draws
    sent by a client process of their own (`--client`: not counted, as wrk is not)."""
    import uvicorn

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
    app = create_app(raffle, scheduler=False)
    with contextlib.suppress(ImportError, AttributeError):  # as a server's worker does
        from raffle.entrypoints.http import main as served

        served._settle_garbage_collector()
    port = _free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, http=_protocol(), log_config=None,
        log_level="warning", access_log=False, lifespan="on",
    )  # fmt: skip
    stopping = asyncio.Event()

    class Server(uvicorn.Server):
        async def main_loop(self) -> None:
            """No tick every 0.1 s (the Date header, the limits): counted per second of wall
            time, so more of them the slower a draw (2-4 % of an embedded count)."""
            await stopping.wait()

    server = Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110  # uvicorn's Server has a flag, no event
        await asyncio.sleep(0.05)
    sender = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.draw_instructions", "--client", str(port),
        "--draws", str(count), "--concurrency", str(concurrency), "--folder", str(folder),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert sender.stdin is not None
    assert sender.stdout is not None
    assert await sender.stdout.readline() == b"warm\n"  # every player's first visit made
    counting.start()
    sender.stdin.write(b"go\n")
    await sender.stdin.drain()
    done = await sender.stdout.readline()
    counting.stop()
    assert done == b"done\n", done
    assert await sender.wait() == 0
    stopping.set()
    await serving
    await raffle.close()


def _protocol() -> Any:
    """The HTTP protocol `raffle serve` gives uvicorn: 8c8526b's own, then uvicorn's, now
    uvicorn's on a transport that joins a response's writes (http/one_write.py)."""
    with contextlib.suppress(ImportError):
        from raffle.entrypoints.http.one_write import OneWriteHttp

        return OneWriteHttp
    try:
        from raffle.entrypoints.http import protocol
    except ImportError:
        return "httptools"
    return f"{protocol.__name__}:JoinedWritesProtocol"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def client(port: int, folder: Path, count: int, concurrency: int) -> None:
    """`concurrency` keep-alive connections, each sending a draw once its last was answered
    (as wrk does), players in turn; first every player's first draw, then `count` counted."""
    tokens = (folder / "tokens").read_text().split()
    numbers = iter(range(1 << 62))

    async def connection(share: int, status: bytes, health: bool) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(share):
            n = next(numbers)
            writer.write(
                b"GET /api/health HTTP/1.1\r\nHost: b\r\n\r\n"
                if health
                else f"POST /api/activities/{ACTIVITY}/draws HTTP/1.1\r\nHost: b\r\n"
                f"Authorization: Bearer {tokens[n % len(tokens)]}\r\n"
                f"Idempotency-Key: {n}\r\nContent-Length: 0\r\n\r\n".encode()
            )
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"(?i)content-length: *(\d+)", head)
            assert length, head
            body = await reader.readexactly(int(length[1]))
            assert head.startswith(status), head + body
        writer.close()

    async def run(total: int, status: bytes = b"HTTP/1.1 201", health: bool = False) -> None:
        shares = [total // concurrency + (i < total % concurrency) for i in range(concurrency)]
        await asyncio.gather(*(connection(share, status, health) for share in shares if share))

    await run(len(tokens))
    print("warm", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    # In the refusals' activity the first visit spent the one chance: every later draw is 409.
    expected = b"HTTP/1.1 409" if ACTIVITY == REFUSALS else b"HTTP/1.1 201"
    await run(count, b"HTTP/1.1 200" if HEALTH else expected, HEALTH)
    print("done", flush=True)


def counted(folder: Path, count: int, concurrency: int, out: Path | None = None) -> int:
    """Instructions of `count` draws after the warm-up, under callgrind (its profile kept in
    `out`, for callgrind_annotate: the C functions and libraries the draws ran)."""
    source = folder / "counting.c"
    source.write_text(COUNTING)
    library = folder / "counting.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", library, source], check=True)
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no",
         f"--callgrind-out-file={out or '/dev/null'}",
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
    parser.add_argument("--activity", type=int, default=ACTIVITY, help="the activity drawn")
    parser.add_argument(
        "--health", action="store_true", help="count GET /api/health instead (the baseline)"
    )
    parser.add_argument("--callgrind-out", type=Path, help="keep callgrind's profile here")
    parser.add_argument("--client", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--inner", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ["BENCH_DRAW_ACTIVITY"] = str(args.activity)
    os.environ["BENCH_HEALTH"] = "1" if args.health else ""
    if args.client is not None:
        asyncio.run(client(args.client, args.folder, args.draws, args.concurrency))
        return
    if args.inner is not None:
        counting: Counting = ctypes.CDLL(str(args.folder / "counting.so"))
        _served_loop(draws(args.folder, args.inner, args.concurrency, counting))
        return
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        # Counts kept in shared files, as `raffle serve --workers 2` keeps them.
        metrics = Path(folder) / "metrics"
        metrics.mkdir()
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(metrics)
        if args.postgres:
            postgres(Path(folder), stack)
        asyncio.run(prepare(Path(folder), max(PLAYERS, 2 * args.concurrency)))
        if args.profile is not None:
            profiled = Profiled(args.profile)
            _served_loop(draws(Path(folder), args.draws, args.concurrency, profiled))
            print(f"{args.profile}: cProfile's stats of {args.draws} draws")
            return
        total = counted(Path(folder), args.draws, args.concurrency, args.callgrind_out)
    where = "PostgreSQL 2 x 4 + Redis" if args.postgres else "embedded"
    what = "GET /api/health" if args.health else f"draws of {args.activity}"
    print(
        f"{total / args.draws:,.0f} instructions a request ({args.draws} {what}, {where}, "
        f"{args.concurrency} at once)"
    )


if __name__ == "__main__":
    main()
