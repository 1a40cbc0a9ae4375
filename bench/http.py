"""HTTP load benchmark of the draw endpoint, `POST /api/activities/{id}/draws`, with many users.

Sets up throwaway databases (SQLite in a temp dir, or new databases on the local PostgreSQL or
MariaDB with Redis), migrates them, loads bench/campaign.yaml, creates the users and their
sessions, starts `raffle serve --workers W` on a free loopback port, drives it with wrk
(bench/draw.lua, bench/health.lua) for a fixed time, and prints draws/s, latency percentiles,
answers by status and, for comparison, the same server's rate on `GET /api/health`. Then it
stops the server, checks the stored rows against what was answered, counts the SQL statements
and Redis commands of one draw in-process, and drops everything it created.

Run (see bench/README.md):

    .venv/bin/python bench/http.py                              # embedded: SQLite, no Redis
    .venv/bin/python bench/http.py --backend postgres           # PostgreSQL 2 x 4 + Redis
    .venv/bin/python bench/http.py --backend postgres --profile /tmp/prof   # + py-spy

Needs wrk (`apt-get install -y wrk`); `--profile` needs py-spy in the venv
(`.venv/bin/pip install py-spy`). Only 127.0.0.1 is ever targeted, and every run is bounded.
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file is bench/http.py, and Python puts its folder first on sys.path: `import http`
# (which httpx does) would import this script again instead of the standard library's.
BENCH = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH]

import argparse  # noqa: E402
import asyncio  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import secrets  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from collections.abc import Awaitable, Callable, Iterator  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from datetime import UTC, datetime, timedelta  # noqa: E402
from typing import Any  # noqa: E402
from urllib.parse import urlsplit  # noqa: E402

import httpx  # noqa: E402

ROOT = BENCH.parent
BIN = Path(sys.executable).parent  # the venv running this script: raffle, py-spy
CAMPAIGN = BENCH / "campaign.yaml"
ACTIVITY = 990101
REFUSALS_ACTIVITY = 990102  # --refusals: a welcome pack of one chance, spent before the run
POLICIES_ACTIVITY = 990103  # --policies: the bench activity with two policies and a dynamic tag
WARM_ROUNDS = 10  # --policies: each user's draws before measuring (1 in 1,000 unseen by a worker)
STRATEGY = 990001


def _stock() -> dict[int, int]:
    """Award -> configured stock of the bench strategy's stocked prizes, from campaign.yaml."""
    import yaml

    (strategy,) = yaml.safe_load(CAMPAIGN.read_text())["strategies"]
    return {int(p["award"]): int(p["stock"]) for p in strategy["prizes"] if "stock" in p}


STOCK = _stock()
PASSWORD = "bench-password"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
TICKS = os.sysconf("SC_CLK_TCK")
WARM_USERS = 500  # --first-visits during: the warm-up's own users
IN_PROCESS_IN_FLIGHT = 64  # draws at once in the in-process count of Redis batching (as wrk)


# ---------------------------------------------------------------------------------------------
# Backends: the databases (and Redis) a run creates, and how to remove them again.


@dataclass
class Backend:
    name: str
    database_urls: list[str]  # the configuration database first
    shard_tables: int
    redis_url: str | None
    drop: list[Callable[[], None]] = field(default_factory=list)  # run in reverse at the end

    def env(self) -> dict[str, str]:
        env = {
            "RAFFLE_DATABASE_URL": self.database_urls[0],
            "RAFFLE_SHARD_URLS": ",".join(self.database_urls[1:]),
            "RAFFLE_SHARD_TABLES": str(self.shard_tables),
        }
        if self.redis_url:
            env["RAFFLE_REDIS_URL"] = self.redis_url
        return env

    def settings(self) -> Any:
        from raffle.settings import Settings

        return Settings(
            database_url=self.database_urls[0],
            shard_urls=",".join(self.database_urls[1:]),
            shard_tables=self.shard_tables,
            redis_url=self.redis_url,
        )

    def cleanup(self) -> None:
        while self.drop:
            step = self.drop.pop()
            try:
                step()
            except Exception as error:
                print(f"cleanup failed: {error!r}", file=sys.stderr)


def _loopback(url: str) -> str:
    host = urlsplit(url).hostname or ""
    if host not in LOOPBACK:
        raise SystemExit(f"refusing {url!r}: the bench only targets 127.0.0.1")
    return url


async def _autocommit(server_url: str, statement: str) -> None:
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlalchemy.pool import NullPool

    engine = create_async_engine(server_url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            await connection.execute(text(statement))
    finally:
        await engine.dispose()


SERVER_DRIVERS = {"postgres": "postgresql+asyncpg", "mariadb": "mysql+asyncmy"}
CREATE = {
    "postgres": "CREATE DATABASE {} TEMPLATE template0",
    "mariadb": "CREATE DATABASE {} CHARACTER SET utf8mb4",
}
DROP = {
    "postgres": "DROP DATABASE IF EXISTS {} WITH (FORCE)",
    "mariadb": "DROP DATABASE IF EXISTS {}",
}


def _pg_setting(setting: str) -> tuple[str, str]:
    """NAME=VALUE of --pg-set, checked to be plain words (they go into SQL as written)."""
    if not (found := re.fullmatch(r"([a-z_]+)=([A-Za-z0-9_.]+)", setting)):
        raise SystemExit(f"--pg-set wants NAME=VALUE in plain words, not {setting!r}")
    return found[1], found[2]


def make_backend(args: argparse.Namespace, tmp: Path) -> Backend:
    if args.backend == "embedded":
        return Backend("embedded", [f"sqlite:///{tmp / 'raffle.db'}"], 1, None)
    from sqlalchemy import make_url

    kind = args.backend
    server = make_url(_loopback(args.postgres_url if kind == "postgres" else args.mariadb_url))
    admin_url = server.set(drivername=SERVER_DRIVERS[kind]).render_as_string(hide_password=False)
    prefix = f"raffle_bench_{secrets.token_hex(4)}"
    backend = Backend(kind, [], args.tables, None)
    for index in range(args.shards):
        name = f"{prefix}_{index}"
        asyncio.run(_autocommit(admin_url, CREATE[kind].format(name)))
        for setting in args.pg_set if kind == "postgres" else ():
            # Settings of the bench's databases only (every new session on them), not the
            # server's: e.g. commit_delay=200 to group commits (superuser-only; we connect
            # as postgres).
            key, value = _pg_setting(setting)
            asyncio.run(_autocommit(admin_url, f"ALTER DATABASE {name} SET {key} = {value}"))
        backend.drop.append(
            lambda name=name: asyncio.run(_autocommit(admin_url, DROP[kind].format(name)))
        )
        backend.database_urls.append(
            server.set(database=name).render_as_string(hide_password=False)
        )
    if not args.no_redis:
        import redis

        url = _loopback(f"{args.redis_url.rstrip('/')}/{args.redis_db}")
        client = redis.Redis.from_url(url)
        client.flushdb()  # a db number of the bench's own: start from nothing

        def flush() -> None:
            client.flushdb()
            client.close()

        backend.drop.append(flush)
        backend.redis_url = url
    return backend


# ---------------------------------------------------------------------------------------------
# Preparing the data: schema, campaign, users and their sessions.


def raffle_cli(env: dict[str, str], *argv: str) -> None:
    done = subprocess.run(
        [str(BIN / "raffle"), *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"raffle {' '.join(argv)} failed:\n{done.stdout}{done.stderr}")
    print(f"  raffle {' '.join(argv)}: {done.stdout.strip()}")


async def create_users_and_sessions(
    backend: Backend,
    users: range,
    visit: bool,
    activity: int = ACTIVITY,
    also: tuple[int, ...] = (),
) -> list[str]:
    """The players numbered `users`, created through the service layer (`create_user`) with a
    cheap argon2 hasher, and a session for each written straight into the session store the
    server reads, as `login` does after the password check (login over HTTP is limited to 30
    a minute per address, with no setting to raise it). With `visit`, each has visited the
    activity (`my_account`, as `GET .../account` does): its account is open with the welcome
    pack. In the refusals activity each then spends its one chance: it has none left."""
    from raffle.adapters.passwords import PasswordHasher
    from raffle.bootstrap import bootstrap
    from raffle.domain.users import Session
    from raffle.service.auth import create_user, token_hash
    from raffle.service.draw import Draw, draw
    from raffle.service.quotas import my_account

    raffle = bootstrap(backend.settings())
    cheap = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)  # a real argon2id hash
    ttl = raffle.settings.session_ttl_seconds
    expires = datetime.now(UTC) + timedelta(seconds=ttl)
    gate = asyncio.Semaphore(8)
    tokens: list[str] = []

    async def one(index: int) -> None:
        name = user_name(index)
        async with gate:
            await create_user(name, PASSWORD, False, raffle.uow(), cheap)
            token = secrets.token_urlsafe(32)
            await raffle.sessions.create(Session(name, False, expires), token_hash(token), ttl)
            for visited in (activity, *also) if visit else ():
                await my_account(
                    name, visited, catalogue=raffle.catalogue, shards=raffle.shards,
                    clock=raffle.clock, hints=raffle.hints,
                )  # fmt: skip
            if activity == REFUSALS_ACTIVITY:
                await draw(
                    Draw(name, activity), catalogue=raffle.catalogue, shards=raffle.shards,
                    stock=raffle.stock, rng=raffle.rng, clock=raffle.clock, hints=raffle.hints,
                )  # fmt: skip
        tokens.append(token)

    try:
        await asyncio.gather(*(one(i) for i in users))
    finally:
        await raffle.close()
    return tokens


def make_players(args: argparse.Namespace, tmp: Path, backend: Backend) -> tuple[Path, Path]:
    """The files of the run's users' tokens and of the warm-up's. At a launch (`--first-visits
    during`) the warm-up draws as users of its own, who visited before: it warms the server
    and leaves every first visit of the run's users to the measured run."""
    started = time.monotonic()
    if args.refusals:  # every user has spent the chances it had: every draw is refused
        tokens = write_tokens(tmp / "tokens.txt", backend, range(args.users), refusals=True)
        print(f"  {args.users:,} users with no chance left in {time.monotonic() - started:.1f} s")
        return tokens, tokens
    before = args.first_visits == "before"
    also = (POLICIES_ACTIVITY,) if args.policies else ()
    users = range(args.users)
    tokens = warm = write_tokens(tmp / "tokens.txt", backend, users, visit=before, also=also)
    made = args.users
    if not before:
        own = range(args.users, args.users + WARM_USERS)
        warm = write_tokens(tmp / "warm.txt", backend, own, visit=True, also=also)
        made += WARM_USERS
    print(f"  {made:,} users and sessions in {time.monotonic() - started:.1f} s")
    return tokens, warm


def write_tokens(
    path: Path,
    backend: Backend,
    users: range,
    *,
    visit: bool = True,
    refusals: bool = False,
    also: tuple[int, ...] = (),
) -> Path:
    """The users' tokens, one a line, for draw.lua; with `visit`, each has visited the
    activities in `also` too."""
    activity = REFUSALS_ACTIVITY if refusals else ACTIVITY
    tokens = asyncio.run(create_users_and_sessions(backend, users, visit, activity, also))
    path.write_text("\n".join(tokens) + "\n")
    return path


def user_name(index: int) -> str:
    return f"bench-u{index:06d}"


# ---------------------------------------------------------------------------------------------
# The server under test.


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    workers: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def worker_pids(self) -> list[int]:
        if self.workers == 1:
            return [self.process.pid]  # uvicorn serves in the process itself
        pids = []
        for child in _children(self.process.pid):
            with contextlib.suppress(OSError):
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
                if b"spawn_main" in cmdline and b"resource_tracker" not in cmdline:
                    pids.append(child)
        return sorted(pids)

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def start_server(env: dict[str, str], workers: int, tmp: Path) -> Server:
    port = free_port()
    log = tmp / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(BIN / "raffle"), "serve", "--workers", str(workers)],
            env={**env, "RAFFLE_HOST": "127.0.0.1", "RAFFLE_PORT": str(port)},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped as one
        )
    server = Server(process, port, log, workers)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode}:\n{log.read_text()}")
        with contextlib.suppress(httpx.HTTPError):
            healthy = httpx.get(f"{server.url}/api/health", timeout=1).status_code == 200
            if healthy and len(server.worker_pids()) == workers:
                return server
        time.sleep(0.2)
    server.stop()
    raise SystemExit(f"the server did not answer /api/health in 60 s:\n{log.read_text()}")


def sanity_check(server: Server) -> dict[str, Any]:
    """One real login over HTTP (well under its limit) and one draw and its replay: the run
    measures the endpoint working, not an error page."""
    with httpx.Client(base_url=server.url, timeout=10) as client:
        login = client.post("/api/auth/login", json={"name": user_name(0), "password": PASSWORD})
        login.raise_for_status()
        auth = {"Authorization": f"Bearer {login.json()['token']}"}
        account = client.get(f"/api/activities/{ACTIVITY}/account", headers=auth)
        account.raise_for_status()
        key = {**auth, "Idempotency-Key": f"sanity-{secrets.token_hex(8)}"}
        first = client.post(f"/api/activities/{ACTIVITY}/draws", headers=key)
        again = client.post(f"/api/activities/{ACTIVITY}/draws", headers=key)
    if first.status_code != 201 or again.json() != first.json():
        raise SystemExit(f"a draw failed: {first.status_code} {first.text} / {again.text}")
    return {"draw": first.json(), "replayed": again.headers.get("Idempotent-Replayed")}


# ---------------------------------------------------------------------------------------------
# CPU accounting from /proc: which processes used the two cores during a phase.


def _cpu_seconds(pid: int, task: int | None = None) -> tuple[str, float] | None:
    """The command name and CPU seconds of a process (or of one of its threads)."""
    path = f"/proc/{pid}/stat" if task is None else f"/proc/{pid}/task/{task}/stat"
    try:
        stat = Path(path).read_text()
    except OSError:
        return None
    comm = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()
    return comm, (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def _machine_busy() -> tuple[float, float]:
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values) - idle) / TICKS, sum(values) / TICKS


@dataclass
class CpuSnapshot:
    at: float
    processes: dict[int, tuple[str, float]]
    busy: tuple[float, float]
    children: float  # CPU of this script's children that ended (wrk)
    threads: dict[int, float]  # the workers' threads other than the event loop's

    @classmethod
    def take(cls, workers: list[int]) -> CpuSnapshot:
        processes = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and (found := _cpu_seconds(int(entry.name))):
                processes[int(entry.name)] = found
        threads: dict[int, float] = {}
        for pid in workers:
            for task in Path(f"/proc/{pid}/task").glob("*"):
                if int(task.name) != pid and (found := _cpu_seconds(pid, int(task.name))):
                    threads[pid] = threads.get(pid, 0.0) + found[1]
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return cls(
            time.monotonic(),
            processes,
            _machine_busy(),
            usage.ru_utime + usage.ru_stime,
            threads,
        )

    def until(self, later: CpuSnapshot, workers: list[int]) -> dict[str, float]:
        """Cores used per group of processes (1.0 = one core busy all the time); processes
        outside the bench (another user's tests, say) are named by their command."""
        wall = later.at - self.at
        groups: Counter[str] = Counter()
        others: Counter[str] = Counter()
        for pid, (comm, seconds) in later.processes.items():
            before = self.processes.get(pid)
            used = (seconds - (before[1] if before and before[0] == comm else 0.0)) / wall
            if pid in workers:
                groups[f"raffle worker {workers.index(pid) + 1}"] += used
                other = later.threads.get(pid, 0.0) - self.threads.get(pid, 0.0)
                groups[f"raffle worker {workers.index(pid) + 1} (its non-loop threads)"] += (
                    other / wall
                )
            elif comm in ("postgres", "mariadbd", "redis-server", "py-spy"):
                groups[comm] += used
            elif pid != os.getpid():
                others[comm] += used
        groups["wrk"] += (later.children - self.children) / wall
        busy = (later.busy[0] - self.busy[0]) / (later.busy[1] - self.busy[1])
        result = {k: round(v, 2) for k, v in sorted(groups.items()) if v >= 0.005}
        for comm, used in others.most_common(3):
            if used >= 0.02:
                result[f"other: {comm}"] = round(used, 2)
        result["machine busy"] = round(busy, 2)
        return result


def wait_for_idle(limit_seconds: float, busy_below: float = 0.2) -> float:
    """Wait (at most `limit_seconds`) for the machine to be quiet; the busy share seen last."""
    deadline = time.monotonic() + limit_seconds
    while True:
        before = _machine_busy()
        time.sleep(1)
        after = _machine_busy()
        busy = (after[0] - before[0]) / max(after[1] - before[1], 1e-9)
        if busy < busy_below or time.monotonic() > deadline:
            return round(busy, 2)


# ---------------------------------------------------------------------------------------------
# Load: wrk with a Lua script; its done() prints one BENCH_JSON line.


def run_wrk(
    url: str, script: str, seconds: float, args: argparse.Namespace, *script_args: str
) -> dict[str, Any]:
    command = [
        "wrk",
        f"-t{args.wrk_threads}",
        f"-c{args.connections}",
        f"-d{max(1, round(seconds))}s",
        f"--timeout={args.timeout}s",
        "-s",
        str(BENCH / script),
        url,
    ]
    if script_args:
        command += ["--", *script_args]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=seconds + 60, check=False
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("BENCH_JSON ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"wrk failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    result: dict[str, Any] = json.loads(lines[-1].removeprefix("BENCH_JSON "))
    seconds_run = result["duration_us"] / 1e6
    latency = result.pop("latency_us")
    return {
        "requests": result["requests"],
        "seconds": round(seconds_run, 2),
        "rps": round(result["requests"] / seconds_run, 1),
        "latency_ms": {k: round(v / 1000, 2) for k, v in latency.items()},
        "statuses": dict(sorted(result["statuses"].items())),
        "non_2xx": result["non_2xx"],
        "socket_errors": result["socket_errors"],
    }


def draw_load(
    server: Server,
    args: argparse.Namespace,
    tokens: Path,
    seconds: float,
    run: str,
    activity: int | None = None,
) -> dict[str, Any]:
    if activity is None:
        activity = REFUSALS_ACTIVITY if args.refusals else ACTIVITY
    return run_wrk(
        server.url,
        "draw.lua",
        seconds,
        args,
        str(tokens),
        str(activity),
        f"{run}-{secrets.token_hex(4)}",
        str(args.wrk_threads),
    )


def policy_draws(
    server: Server, args: argparse.Namespace, tokens: Path, report: dict[str, Any]
) -> int:
    """The same users' draws in the activity with policies, warmed as the plain one was (its
    counters, the profiles and the tag in each process), then the plain activity's again:
    the policies are compared with the plain runs before and after them, so that a machine
    that speeds up or slows down during the run weighs on both sides. The 201 answers."""
    print(f"draws with policies {args.seconds:g} s (warm-up {args.warmup:g} s at least)")
    # Each process reads a user's profile on their first draw there: the warm-up lasts until
    # every user has drawn WARM_ROUNDS times, so that (users taken in turn, each draw in one
    # of the workers at random) the profiles are kept in every worker, as the plain draws'
    # accounts are, whatever the machine's speed.
    warm_draws, warmed_201 = WARM_ROUNDS * args.users, 0
    while True:
        warmed = draw_load(server, args, tokens, args.warmup, "warm-policies", POLICIES_ACTIVITY)
        warmed_201 += int(warmed["statuses"].get("201", 0))
        if warmed_201 >= warm_draws:
            break
    report["busy before draws with policies"] = wait_for_idle(args.idle_wait)
    report["draws with policies"], report["cpu during draws with policies"] = measured(
        lambda: draw_load(server, args, tokens, args.seconds, "policies", POLICIES_ACTIVITY),
        server,
    )
    print(f"draws again {args.seconds:g} s")
    report["draws again"], report["cpu during draws again"] = measured(
        lambda: draw_load(server, args, tokens, args.seconds, "again"), server
    )
    return warmed_201 + sum(
        int(run["statuses"].get("201", 0))
        for run in (report["draws with policies"], report["draws again"])
    )


def measured(
    phase: Callable[[], dict[str, Any]], server: Server
) -> tuple[dict[str, Any], dict[str, float]]:
    workers = server.worker_pids()
    io_before = _worker_io(workers)
    before = CpuSnapshot.take(workers)
    result = phase()
    cpu = before.until(CpuSnapshot.take(workers), workers)
    io_after = _worker_io(workers)
    # CPU per answered request, robust against other load on the machine (it slows the run
    # down, but does not change what one request costs).
    rps = max(result["rps"], 1e-9)
    app = sum(v for k, v in cpu.items() if re.fullmatch(r"raffle worker \d+", k))
    servers = sum(cpu.get(k, 0.0) for k in ("postgres", "mariadbd", "redis-server"))
    result["cpu_ms_per_request"] = {
        "raffle workers": round(1000 * app / rps, 2),
        "database + redis servers": round(1000 * servers / rps, 2),
        "wrk": round(1000 * cpu.get("wrk", 0.0) / rps, 3),
    }
    requests = max(result["requests"], 1)
    result["workers_per_request"] = {
        k: round(
            (io_after[k] - io_before[k]) * (1000 / TICKS if k.endswith("ms") else 1) / requests, 3
        )
        for k in io_after
    }
    return result, cpu


def _worker_io(workers: list[int]) -> Counter[str]:
    """The workers' user and system CPU, and their read and write syscalls (the kernel's
    side of a loopback write, delivering it to the reader, is the writer's system time)."""
    total: Counter[str] = Counter()
    for pid in workers:
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{pid}/stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            total["user ms"] += int(fields[11])
            total["system ms"] += int(fields[12])
            for line in Path(f"/proc/{pid}/io").read_text().splitlines():
                name, _, value = line.partition(": ")
                if name in ("syscr", "syscw"):
                    total[{"syscr": "read syscalls", "syscw": "write syscalls"}[name]] += int(value)
    return total


async def _server_counters(backend: Backend) -> dict[str, float]:
    """The database server's own counters for the bench's databases: sessions (connections)
    opened, transactions committed and rolled back, rows written (PostgreSQL only)."""
    if backend.name != "postgres":
        return {}
    from sqlalchemy import bindparam, make_url, text
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlalchemy.pool import NullPool

    names = [make_url(url).database for url in backend.database_urls]
    url = make_url(backend.settings().database_url).set(database="postgres")
    engine = create_async_engine(url, poolclass=NullPool)
    query = text(
        "SELECT sum(sessions), sum(xact_commit), sum(xact_rollback), "
        "sum(tup_inserted + tup_updated + tup_deleted) "
        "FROM pg_stat_database WHERE datname IN :names"
    ).bindparams(bindparam("names", expanding=True))
    try:
        async with engine.connect() as connection:
            row = (await connection.execute(query, {"names": names})).one()
    finally:
        await engine.dispose()
    keys = ("connections opened", "commits", "rollbacks", "rows written")
    return {k: float(v or 0) for k, v in zip(keys, row, strict=True)}


def server_counters_since(
    backend: Backend, before: dict[str, float], requests: int
) -> dict[str, float] | None:
    """The database server's counters since `before`, per answered request."""
    if not before:
        return None
    time.sleep(1.5)  # PostgreSQL publishes backends' statistics about once a second
    after = asyncio.run(_server_counters(backend))
    return {k: round((after[k] - before[k]) / max(requests, 1), 3) for k in before}


# ---------------------------------------------------------------------------------------------
# Profiling with py-spy: raw (collapsed) stacks per worker, a speedscope file made from them,
# and a breakdown of the samples.

Frames = list[tuple[str, str]]  # (function's qualified name, file), root first


def on_stack(file_part: str, function: str | None = None) -> Callable[[Frames], bool]:
    """A frame of `file_part` (and of `function`, by qualified name or its last part) is on
    the stack."""

    def found(frames: Frames) -> bool:
        return any(
            file_part in file
            and (function is None or name == function or name.endswith("." + function))
            for name, file in frames
        )

    return found


def _outside_execution(frames: Frames) -> bool:
    """SQLAlchemy expression code not under Connection.execute: building the statements."""
    engine = on_stack("sqlalchemy/engine/")
    return on_stack("sqlalchemy/sql/")(frames) and not engine(frames)


def _event_loop_itself(frames: Frames) -> bool:
    """Samples whose innermost Python frame is the loop's entry: time in uvloop's C code
    (socket reads and writes, httptools parsing, callbacks' bookkeeping)."""
    name, file = frames[-1]
    return name.endswith(("Runner.run", "run_until_complete", "run_forever", "Server.run")) or (
        file.endswith("asyncio/runners.py")
    )


# A sample counts once under each label whose test matches its stack: labels group what a
# draw (or --flash purchase) request does, outermost first; indented ones are parts of the
# one above.
INCLUSIVE: list[tuple[str, Callable[[Frames], bool]]] = [
    ("ASGI request (uvicorn run_asgi and all below)", on_stack("httptools_impl.py", "run_asgi")),
    (
        "  FastAPI solve_dependencies",
        on_stack("fastapi/dependencies/utils.py", "solve_dependencies"),
    ),
    ("    session touch (authenticate)", on_stack("raffle/service/auth.py", "authenticate")),
    ("  rate limiter hit", on_stack("raffle/adapters/rate_limits.py")),
    (
        "  idempotency store begin/finish",
        on_stack("raffle/adapters/sql/repositories/idempotency.py"),
    ),
    ("  draw use case (service/draw.py)", on_stack("raffle/service/draw.py", "draw")),
    ("    quota consume", on_stack("raffle/service/draw.py", "_consume")),
    ("    replay lookup by Idempotency-Key", on_stack("raffle/service/draw.py", "_replay")),
    ("    prize stock take", on_stack("raffle/service/draw.py", "_take_prize")),
    (
        "      SQL stock claim",
        on_stack("raffle/adapters/sql/stock_claims.py", "claim"),
    ),
    ("    record order, win, outbox", on_stack("raffle/service/draw.py", "_record")),
    ("  catalogue (cached config)", on_stack("raffle/service/catalogue.py")),
    ("  flash purchase use case (--flash)", on_stack("raffle/service/flash_sales.py", "purchase")),
    ("  route matching (Starlette's router)", on_stack("starlette/routing.py", "matches")),
    ("  response: jsonable_encoder + JSONResponse", on_stack("fastapi/encoders.py")),
    ("SQLAlchemy: building statements (outside execute)", _outside_execution),
    ("SQLAlchemy: Connection.execute and below", on_stack("sqlalchemy/engine/base.py", "execute")),
    ("  cache key generation", on_stack("sqlalchemy/sql/cache_key.py")),
    ("  statement compile", on_stack("sqlalchemy/sql/compiler.py")),
    ("  result rows", on_stack("sqlalchemy/engine/result.py")),
    (
        "SQLAlchemy: transactions/connections (transaction.py)",
        on_stack("adapters/sql/transaction.py"),
    ),
    ("SQLAlchemy: pool", on_stack("sqlalchemy/pool/")),
    (
        "  pool_pre_ping (asyncpg: BEGIN; ';'; ROLLBACK)",
        lambda f: on_stack("asyncpg.py", "_async_ping")(f) or on_stack("pool/", "do_ping")(f),
    ),
    ("  new connections (pool churn: connect, auth, SSL try)", on_stack("connect_utils.py")),
    ("asyncpg (incl. SQLAlchemy's adapter)", on_stack("asyncpg")),
    ("asyncmy (incl. SQLAlchemy's adapter)", on_stack("asyncmy")),
    ("aiosqlite / sqlite3 (incl. its threads)", on_stack("aiosqlite")),
    ("redis client", on_stack("/redis/")),
    ("threadpool hops (sync FastAPI deps, anyio)", on_stack("/anyio/")),
    (
        "uvicorn protocol (outside the app)",
        lambda f: (
            on_stack("uvicorn/protocols/")(f) and not on_stack("httptools_impl.py", "run_asgi")(f)
        ),
    ),
    ("event loop itself (uvloop C: I/O, HTTP parsing)", _event_loop_itself),
]

FRAME = re.compile(r"^(?P<function>.*) \((?P<file>.*?)(?::(?P<line>\d+))?\)$")


def start_profilers(
    pids: list[int], seconds: float, out: Path, *, gil: bool, native: bool = False
) -> list[subprocess.Popen[bytes]]:
    """py-spy on each worker; with `gil`, only the thread holding the GIL is sampled, so the
    samples are where the Python CPU goes (waits and GIL-free C code are left out)."""
    spy = BIN / "py-spy"
    if not spy.exists():
        raise SystemExit(f"--profile needs py-spy: {BIN / 'pip'} install py-spy")
    out.mkdir(parents=True, exist_ok=True)
    return [
        subprocess.Popen(
            [
                str(spy),
                "record",
                "--pid",
                str(pid),
                "--duration",
                str(max(1, round(seconds))),
                "--rate",
                "100",
                # --native pauses the process per sample (py-spy refuses it with --nonblocking)
                *(["--native"] if native else ["--nonblocking"]),
                *(["--gil"] if gil else []),
                "--full-filenames",
                "--format",
                "raw",
                "--output",
                str(out / f"worker-{n}.txt"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for n, pid in enumerate(pids, 1)
    ]


def _frames(stack: str) -> Frames:
    frames = []
    for frame in stack.split(";"):
        match = FRAME.match(frame)
        frames.append((match["function"], match["file"]) if match else (frame, ""))
    return frames


def _package(path: str) -> str:
    if "/site-packages/" in path:
        return path.split("/site-packages/", 1)[1].split("/", 1)[0].removesuffix(".py")
    if "/src/raffle/" in path:
        parts = path.split("/src/raffle/", 1)[1].split("/")
        return "raffle/" + parts[0].removesuffix(".py")
    if match := re.search(r"/lib/python3\.\d+/([^/]+)", path):
        return "stdlib " + match[1].removesuffix(".py")
    return path or "?"


def analyse_profile(files: list[Path]) -> dict[str, Any]:
    total = 0
    inclusive: Counter[str] = Counter()
    by_package: Counter[str] = Counter()
    by_function: Counter[str] = Counter()
    for path in files:
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                continue
            n = int(count)
            frames = _frames(stack)
            total += n
            leaf_function, leaf_file = frames[-1]
            by_package[_package(leaf_file)] += n
            by_function[f"{leaf_function} ({_short(leaf_file)})"] += n
            for label, test in INCLUSIVE:
                if test(frames):
                    inclusive[label] += n

    def share(counter: Counter[str], top: int | None = None) -> dict[str, float]:
        items = counter.most_common(top) if top else counter.items()
        return {k: round(100 * v / total, 1) for k, v in items}

    return {
        "samples": total,
        "inclusive_percent": {label: share(inclusive).get(label, 0.0) for label, *_ in INCLUSIVE},
        "self_percent_by_package": share(by_package, 15),
        "self_percent_by_function": share(by_function, 20),
    }


def _short(path: str) -> str:
    for marker in ("/site-packages/", "/src/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return re.sub(r".*/lib/python3\.\d+/", "", path)


def write_speedscope(raw: Path, target: Path) -> None:
    """The collapsed stacks of `raw` as a speedscope "sampled" profile (speedscope.app)."""
    frames: dict[str, int] = {}
    samples, weights = [], []
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            samples.append([frames.setdefault(f, len(frames)) for f in stack.split(";")])
            weights.append(int(count))
    document = {
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "shared": {"frames": [{"name": name} for name in frames]},
        "profiles": [
            {
                "type": "sampled",
                "name": raw.stem,
                "unit": "none",
                "startValue": 0,
                "endValue": sum(weights),
                "samples": samples,
                "weights": weights,
            }
        ],
    }
    target.write_text(json.dumps(document))


# ---------------------------------------------------------------------------------------------
# After the load: the stored rows against the answers, and the statements of one draw.


async def integrity(backend: Backend) -> dict[str, Any]:
    from sqlalchemy import text

    from raffle.adapters.sql.unit_of_work import create_engine

    wins: Counter[int] = Counter()
    orders = 0
    engines = [create_engine(url) for url in backend.settings().database_urls]
    try:
        for engine in engines:
            async with engine.connect() as connection:
                for table in range(backend.shard_tables):
                    rows = await connection.execute(
                        text(f"SELECT award_id, COUNT(*) FROM award_record_{table:03d} GROUP BY 1")
                    )
                    wins.update({int(a): int(n) for a, n in rows})
                    orders += int(
                        await connection.scalar(
                            text(f"SELECT COUNT(*) FROM raffle_order_{table:03d}")
                        )
                        or 0
                    )
        async with engines[0].connect() as connection:
            claims = {
                int(a): int(n)
                for a, n in await connection.execute(
                    text("SELECT award_id, COUNT(*) FROM stock_claim GROUP BY 1")
                )
            }
            keys = {
                str(s): int(n)
                for s, n in await connection.execute(
                    text("SELECT status, COUNT(*) FROM idempotency GROUP BY 1")
                )
            }
    finally:
        for engine in engines:
            await engine.dispose()
    oversold = {a: wins[a] - stock for a, stock in STOCK.items() if wins[a] > stock}
    return {
        "orders": orders,
        "wins_by_award": dict(sorted(wins.items())),
        "stock": STOCK,
        "oversold": oversold,
        "stock_claims_by_award": claims,
        "idempotency_keys_by_status": keys,
    }


def orders_against_answers(args: argparse.Namespace, report: dict[str, Any]) -> dict[str, Any]:
    """Every order stored was answered 201, but for the draws still in flight when a wrk run
    ended (at most its connections, for each run) and the chances spent before a refusals
    run; an order missing, or one too many, is a lost or a phantom draw."""
    # warm-up, draws (each pair's), the run under py-spy, and the policies' warm-up, draws
    # and draws again
    runs = 1 + (args.pairs or 1) + bool(args.profile) + 3 * bool(args.policies)
    spent = args.users if args.refusals else 0
    unanswered = report["integrity"]["orders"] - report["answered 201"] - spent
    bound = args.connections * runs
    return {"unanswered": unanswered, "bound": bound, "ok": 0 <= unanswered <= bound}


class Tally(Counter[str]):
    """Counts by kind while `on`: what the counted draws did, not their warm-up."""

    on = False

    def add(self, kind: str) -> None:
        if self.on:
            self[kind] += 1


def _count_sql(raffle: Any, tally: Tally) -> None:
    """Statements by database and kind, transactions, pool checkouts and returns, and
    statement compilations (SQLAlchemy compiled-cache misses)."""
    from sqlalchemy import event
    from sqlalchemy.engine.default import CACHE_MISS

    from raffle.adapters.sql.connection import sqlite_file, sync_twin

    databases = len(raffle.settings.database_urls)
    for index, engine in enumerate(raffle.engines):
        if index == 0:
            where = "db 0 (config + shard)"
        elif index < databases:
            where = f"db {index} (shard)"
        else:  # a pool of its own on db 0 (stock claims, in some versions of bootstrap)
            where = f"db 0, extra pool {index - databases + 1}"

        def execute(_c: Any, _cur: Any, statement: str, *rest: Any, where: str = where) -> None:
            tally.add(f"{where}: {statement.split(None, 1)[0].upper()}")
            if rest[1] is not None and rest[1].cache_hit is CACHE_MISS:
                tally.add("statements compiled (SQLAlchemy cache miss)")

        def on(kind: str, where: str = where) -> Callable[..., None]:
            return lambda *_: tally.add(f"{where}: {kind}")

        syncs = [engine.sync_engine]
        if sqlite_file(engine):  # transactions run on its synchronous twin
            twin = sync_twin(engine)
            syncs.append(twin)

            def trace(statement: str, where: str = where) -> None:
                tally.add(f"{where}: {statement.split(None, 1)[0].upper()}")

            # Every statement the sqlite3 connection runs, through SQLAlchemy or directly
            # (the draw's, see sqlite/draw.py), BEGIN and COMMIT included.
            event.listen(twin, "connect", lambda dbapi, _record: dbapi.set_trace_callback(trace))
        for sync in syncs:
            if sync is engine.sync_engine or not sqlite_file(engine):
                event.listen(sync, "before_cursor_execute", execute)
            event.listen(sync, "begin", on("tx begin"))
            event.listen(sync, "commit", on("tx commit"))
            event.listen(sync, "rollback", on("tx rollback"))
            event.listen(sync, "checkout", on("pool checkout (+ pre-ping)"))
            event.listen(sync, "reset", on("pool reset on return (rollback)"))
    _count_asyncpg_direct(tally)


def _count_asyncpg_direct(tally: Tally) -> None:
    """The statements run on asyncpg directly (postgres/draw_batch.py, postgres/statements.py, the
    stock claims): fetch, fetchrow, executemany (one round trip), and execute with arguments
    (SQLAlchemy's adapter runs its own through prepared statements, and execute without
    arguments only for its "BEGIN;" and "COMMIT;", which its events count), and the
    BEGIN, COMMIT and ROLLBACK that the draw batches send on their own connections
    (postgres/lane.py)."""
    import asyncpg

    connection = asyncpg.Connection
    fetch, fetchrow = connection.fetch, connection.fetchrow
    execute, executemany = connection.execute, connection.executemany

    def kind(query: str) -> str:
        return f"db (asyncpg direct): {query.split(None, 1)[0].upper()}"

    async def counted_fetch(self: Any, query: str, *args: Any, **kw: Any) -> Any:
        tally.add(kind(query))
        return await fetch(self, query, *args, **kw)

    async def counted_fetchrow(self: Any, query: str, *args: Any, **kw: Any) -> Any:
        tally.add(kind(query))
        return await fetchrow(self, query, *args, **kw)

    async def counted_execute(self: Any, query: str, *args: Any, **kw: Any) -> Any:
        if args:
            tally.add(kind(query))
        elif query in ("BEGIN", "COMMIT", "ROLLBACK"):
            tally.add(f"db (lane): {query}")
        return await execute(self, query, *args, **kw)

    async def counted_executemany(self: Any, query: str, *args: Any, **kw: Any) -> Any:
        tally.add(kind(query))
        return await executemany(self, query, *args, **kw)

    connection.fetch = counted_fetch  # type: ignore[method-assign]
    connection.fetchrow = counted_fetchrow  # type: ignore[method-assign]
    connection.execute = counted_execute  # type: ignore[method-assign]
    connection.executemany = counted_executemany  # type: ignore[method-assign]


def _count_redis(raffle: Any, tally: Tally) -> None:
    """Redis commands by name: the hot ones through the shared pipeline (its own counters
    give the round trips), the rare ones straight on the client."""
    if raffle.redis is None:
        return
    execute_command = raffle.redis.execute_command

    async def counted(*command: Any, **options: Any) -> Any:
        tally.add(f"redis: {command[0]}")
        return await execute_command(*command, **options)

    raffle.redis.execute_command = counted
    if (pipeline := getattr(raffle, "redis_commands", None)) is not None:
        execute = pipeline.execute

        async def counted_in_pipeline(*command: Any) -> Any:
            tally.add(f"redis: {command[0]} (shared pipeline)")
            return await execute(*command)

        pipeline.execute = counted_in_pipeline


async def in_flight(raffle: Any, draw: Callable[[str], Awaitable[int]], tokens: list[str]) -> Any:
    """The same draws again, IN_PROCESS_IN_FLIGHT at once (as wrk's connections): CPU per
    draw, and Redis commands per round trip where they share a pipeline."""
    pipeline = getattr(raffle, "redis_commands", None)
    gate = asyncio.Semaphore(IN_PROCESS_IN_FLIGHT)

    async def gated(token: str) -> int:
        async with gate:
            return await draw(token)

    sent, trips = (pipeline.commands, pipeline.round_trips) if pipeline else (0, 0)
    cpu = time.process_time()
    statuses = Counter(await asyncio.gather(*(gated(token) for token in tokens)))
    cpu = time.process_time() - cpu
    found: dict[str, Any] = {
        "in_flight": IN_PROCESS_IN_FLIGHT,
        "cpu_ms_per_draw": round(1000 * cpu / len(tokens), 2),
        "statuses": dict(statuses),
    }
    if pipeline:
        sent, trips = pipeline.commands - sent, pipeline.round_trips - trips
        found["redis_commands_per_draw"] = round(sent / len(tokens), 2)
        found["redis_round_trips_per_draw"] = round(trips / len(tokens), 2)
    return found


def _count_thread_hops(tally: Tally) -> None:
    """The trips to another thread a request makes: FastAPI runs sync (`def`) dependencies
    in the threadpool, and aiosqlite runs every cursor call in its own thread."""
    import aiosqlite.core
    import fastapi.dependencies.utils

    to_threadpool = fastapi.dependencies.utils.run_in_threadpool

    async def threadpool(call: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(call, "__name__", "?")
        tally.add(f"thread hop: FastAPI sync dependency {name}() in the threadpool")
        return await to_threadpool(call, *args, **kwargs)

    fastapi.dependencies.utils.run_in_threadpool = threadpool  # type: ignore[assignment]
    execute = aiosqlite.core.Connection._execute

    async def in_thread(self: Any, call: Any, *args: Any, **kwargs: Any) -> Any:
        tally.add("thread hop: aiosqlite call")
        return await execute(self, call, *args, **kwargs)

    aiosqlite.core.Connection._execute = in_thread  # type: ignore[method-assign]


async def statements_per_draw(backend: Backend, draws: int) -> dict[str, Any]:
    """Run draws through the real ASGI app in this process (no socket), one at a time, and
    count per draw the SQL statements, round trips, Redis commands and thread hops."""
    from raffle.bootstrap import bootstrap
    from raffle.domain.users import Session
    from raffle.entrypoints.http.app import create_app
    from raffle.service.auth import token_hash

    raffle = bootstrap(backend.settings())
    app = create_app(raffle, scheduler=False)
    tally = Tally()
    _count_sql(raffle, tally)
    _count_redis(raffle, tally)
    _count_thread_hops(tally)
    ttl = raffle.settings.session_ttl_seconds
    tokens = []
    for i in range(draws):  # sessions of users who already drew: the steady state
        token = secrets.token_urlsafe(32)
        session = Session(user_name(i), False, datetime.now(UTC) + timedelta(seconds=ttl))
        await raffle.sessions.create(session, token_hash(token), ttl)
        tokens.append(token)
    path = f"/api/activities/{ACTIVITY}/draws"
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as client,
    ):

        async def one(token: str) -> int:
            key = secrets.token_hex(12)
            headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": key}
            return (await client.post(path, headers=headers)).status_code

        for token in tokens[:20]:  # warm the catalogue, the pools and the statement caches
            await one(token)
        tally.on = True
        started, cpu = time.perf_counter(), time.process_time()
        statuses = Counter([await one(token) for token in tokens])
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        tally.on = False
        concurrent = await in_flight(raffle, one, tokens)
    dialect = raffle.engines[0].dialect.name
    await raffle.close()
    summary = _per_draw(tally, draws, dialect)
    summary["statuses"] = dict(statuses)
    summary["sequential_ms_per_draw_in_process"] = round(1000 * elapsed / draws, 2)
    summary["cpu_ms_per_draw_in_process"] = round(1000 * cpu / draws, 2)
    summary["in_flight"] = concurrent
    return summary


def _per_draw(tally: Tally, draws: int, dialect: str) -> dict[str, Any]:
    def total(*suffixes: str) -> float:
        return sum(v for k, v in tally.items() if "db" in k and k.endswith(suffixes)) / draws

    statements = total("SELECT", "INSERT", "UPDATE", "DELETE", "WITH")
    # Each is one wait for the database: BEGIN and COMMIT are statements of their own on
    # asyncpg and asyncmy (SQLite's BEGIN IMMEDIATE is counted as a statement already).
    # The engines do not pre-ping (create_engine); asyncmy rolls back on every return to the
    # pool. An autocommit claim on PostgreSQL fires "tx begin"/"tx commit" without sending
    # them, so its two are counted though not made (0.6 a draw at most).
    # The draw batches' lanes send BEGIN, COMMIT and ROLLBACK on asyncpg themselves.
    lane = sum(v for k, v in tally.items() if k.startswith("db (lane)")) / draws
    trips = statements + total("tx commit", "tx rollback") + lane
    if dialect == "postgresql":
        trips += total("tx begin")
    elif dialect in ("mysql", "mariadb"):
        trips += total("tx begin") + total("(rollback)")
    return {
        "draws": draws,
        "per_draw": {k: round(v / draws, 2) for k, v in sorted(tally.items())},
        "sql_statements_per_draw": round(statements, 1),
        "sql_round_trips_per_draw": round(trips, 1),
        "redis_commands_per_draw": round(
            sum(v for k, v in tally.items() if k.startswith("redis")) / draws, 1
        ),
    }


# ---------------------------------------------------------------------------------------------
# The report.


def server_errors(log: Path) -> dict[str, int]:
    """Exceptions in the server log, by their line after each traceback (chained ones too)."""
    found: Counter[str] = Counter()
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    in_traceback = False
    for line in lines:
        if line.startswith("Traceback"):
            in_traceback = True
        elif in_traceback and line and not line.startswith((" ", "\t")):
            found[line[:200]] += 1
            in_traceback = False
    return dict(found.most_common(12))


def print_in_flight(concurrent: dict[str, Any]) -> None:
    redis = ""
    if "redis_round_trips_per_draw" in concurrent:
        redis = (
            f", Redis {concurrent['redis_commands_per_draw']} commands in "
            f"{concurrent['redis_round_trips_per_draw']} round trips"
        )
    print(
        f"    the same draws {concurrent['in_flight']} at once: CPU "
        f"{concurrent['cpu_ms_per_draw']} ms a draw{redis}, answers {concurrent['statuses']}"
    )


def print_cpu(name: str, cpu: dict[str, float], run: dict[str, Any]) -> None:
    one = name.removesuffix("s")
    print(f"cores used during {name}: " + ", ".join(f"{k} {v}" for k, v in cpu.items()))
    if db := run.get("database_per_request"):
        print(f"  database server per {one}: {db}")
    per = run["cpu_ms_per_request"]
    print(f"  CPU ms per {one} request: " + ", ".join(f"{k} {v}" for k, v in per.items()))
    if io := run.get("workers_per_request"):
        print(f"  workers per {one} request: {dict(io)}")


def print_summary(report: dict[str, Any]) -> None:
    cfg = report["config"]
    print()
    print(
        f"== {cfg['backend']}: {cfg['databases']} database(s) x {cfg['shard_tables']} table(s), "
        f"redis {'yes' if cfg['redis'] else 'no'}, {cfg['workers']} worker(s), "
        f"deliveries {cfg.get('deliveries', 'inline')}, "
        f"first visits {cfg.get('first_visits', 'during')}, "
        f"{cfg['connections']} connections, {cfg['users']:,} users, {cfg['seconds']} s; "
        f"{cfg['git']}; machine busy before: {report.get('busy before draws')}"
        + (f"; PostgreSQL {', '.join(cfg['pg_set'])}" if cfg.get("pg_set") else "")
        + (f"; pool size {cfg['pool_size']}" if cfg.get("pool_size") else "")
    )
    head = f"{'endpoint':<22}{'req/s':>10}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'max ms':>9}"
    print(head + "  answers")
    for name in ("draws", "draws with policies", "draws again", "health", "draws under py-spy"):
        if (r := report.get(name)) is None:
            continue
        lat = r["latency_ms"]
        answers = ", ".join(f"{k}: {v:,}" for k, v in r["statuses"].items()) or (
            f"non-2xx: {r['non_2xx']:,}"
        )
        socket_errors = {k: v for k, v in r["socket_errors"].items() if v}
        if socket_errors:
            answers += f"; socket errors {socket_errors}"
        print(
            f"{name:<22}{r['rps']:>10,.0f}{lat['p50']:>9.1f}{lat['p90']:>9.1f}"
            f"{lat['p99']:>9.1f}{lat['max']:>9.1f}  {answers}"
        )
    if (
        cfg.get("first_visits") == "during"
        and not cfg.get("refusals")
        and (draws := report.get("draws"))
    ):
        # draw.lua takes the users in turn: each user's first draw is a first visit.
        visits = min(cfg["users"], draws["requests"])
        print(f"first visits: {visits:,} of the {draws['requests']:,} draws measured")
    for name in ("draws", "draws with policies", "draws again", "health"):
        if cpu := report.get(f"cpu during {name}"):
            print_cpu(name, cpu, report[name])
    print_ratio(report)
    if errors := report.get("server errors"):
        print("server exceptions: " + json.dumps(errors, ensure_ascii=False))
    if check := report.get("integrity"):
        matched = report["orders against answers"]
        verdict = "ok" if matched["ok"] else "MISMATCH"
        print(
            f"stored: {check['orders']:,} orders for {report['answered 201']:,} answers 201 "
            f"({matched['unanswered']:,} unanswered, in flight at most {matched['bound']:,}: "
            f"{verdict}); "
            f"wins {check['wins_by_award']}, stock claims {check['stock_claims_by_award']}, "
            f"oversold {check['oversold'] or 'none'}"
        )
    if count := report.get("statements"):
        print(
            f"one draw (in-process, steady state): {count['sql_statements_per_draw']} SQL "
            f"statements, {count['sql_round_trips_per_draw']} database round trips, "
            f"{count['redis_commands_per_draw']} Redis "
            f"commands, {count['sequential_ms_per_draw_in_process']} ms when run one at a time"
        )
        print(
            f"    CPU {count['cpu_ms_per_draw_in_process']} ms per draw in that process "
            "(the app plus httpx's in-process client)"
        )
        for k, v in count["per_draw"].items():
            print(f"    {v:>6}  {k}")
        if concurrent := count.get("in_flight"):
            print_in_flight(concurrent)
    if profile := report.get("profile"):
        print_profile(profile)


def print_ratio(report: dict[str, Any]) -> None:
    """The figures the issue asks for: the rate against health's, and all the CPU a draw costs."""
    if not (draws := report.get("draws")) or not (health := report.get("health")):
        return
    per = draws["cpu_ms_per_request"]
    total = per["raffle workers"] + per["database + redis servers"]
    what = "refusals" if report["config"].get("refusals") else "draws"
    print(
        f"{what}/s / health req/s: {draws['rps'] / max(health['rps'], 1e-9):.2f}; "
        f"CPU per {what.removesuffix('s')}: {total:.2f} ms (workers + database + Redis)"
    )
    if len(rounds := report.get("rounds", [])) > 1:
        each = ", ".join(f"{r['draws']:,.0f} / {r['health']:,.0f}" for r in rounds)
        summed = sum(r["draws"] for r in rounds) / max(sum(r["health"] for r in rounds), 1e-9)
        print(f"  {len(rounds)} pairs ({what}/s / health req/s): {each}; {summed:.2f} summed")
    if policies := report.get("draws with policies"):
        per = policies["cpu_ms_per_request"]
        plain = (draws["rps"] + report["draws again"]["rps"]) / 2
        print(
            f"draws with policies / draws (before and after them): "
            f"{policies['rps'] / max(plain, 1e-9):.2f}; "
            f"CPU per draw with policies: "
            f"{per['raffle workers'] + per['database + redis servers']:.2f} ms"
        )


def print_profile(profile: dict[str, Any]) -> None:
    if profile:
        print(f"py-spy: {profile['samples']:,} samples over the workers ({profile['mode']})")
        print("  inclusive (share of samples with the frame on the stack):")
        for k, v in profile["inclusive_percent"].items():
            print(f"    {v:>5.1f}%  {k}")
        print("  self time by package (top 10):")
        for k, v in list(profile["self_percent_by_package"].items())[:10]:
            print(f"    {v:>5.1f}%  {k}")
        print("  self time by function (top 12):")
        for k, v in list(profile["self_percent_by_function"].items())[:12]:
            print(f"    {v:>5.1f}%  {k}")


# ---------------------------------------------------------------------------------------------
# --flash: purchases of a sold-out flash sale against the health endpoint, alternated.

FLASH_SALE = 990181
FLASH_UNITS = 5  # sold through the API before the measured runs
FLASH_TRIES = FLASH_UNITS + 4  # purchases made to sell it out: the last four hear sold out
FLASH_DIFFICULTY = 8  # the bench solves every player's challenge: 256 hashes, not 65,000


def flash_env(broker_url: str) -> dict[str, str]:
    """What every worker shares for the sale: one path secret (a path made by one worker is
    checked by the other), paths that outlive the run, and no per-address limit (every
    player comes from 127.0.0.1)."""
    return {
        "RAFFLE_BROKER_URL": broker_url,
        "RAFFLE_FLASH_SECRET": secrets.token_urlsafe(32),
        "RAFFLE_FLASH_DIFFICULTY": str(FLASH_DIFFICULTY),
        "RAFFLE_FLASH_PATH_SECONDS": "7200",
        "RAFFLE_FLASH_ADDRESS_PER_SECOND": "1000000",
    }


async def admin_token(backend: Backend) -> str:
    """An operator's session, made as the players' are (for the admin API's sale)."""
    from raffle.adapters.passwords import PasswordHasher
    from raffle.bootstrap import bootstrap
    from raffle.domain.users import Session
    from raffle.service.auth import create_user, token_hash

    raffle = bootstrap(backend.settings())
    cheap = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    ttl = raffle.settings.session_ttl_seconds
    token = secrets.token_urlsafe(32)
    try:
        await create_user("bench-admin", PASSWORD, True, raffle.uow(), cheap)
        expires = datetime.now(UTC) + timedelta(seconds=ttl)
        await raffle.sessions.create(Session("bench-admin", True, expires), token_hash(token), ttl)
    finally:
        await raffle.close()
    return token


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def flash_players(url: str, admin: str, tokens: list[str]) -> list[str]:
    """The sale, created through the admin API; then each player's "TOKEN PATH" line, the
    path asked for as a page does (a challenge, solved here, then the path)."""
    from raffle.domain.flash_gate import solve

    now = datetime.now(UTC)
    sale = {
        "id": FLASH_SALE, "name": "bench cup", "price": 990, "currency": "cents",
        "stock": FLASH_UNITS, "starts_at": (now - timedelta(minutes=1)).isoformat(),
        "ends_at": (now + timedelta(hours=2)).isoformat(),
    }  # fmt: skip
    base = f"/api/flash-sales/{FLASH_SALE}"
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        made = await client.post("/api/admin/flash-sales", json=sale, headers=_bearer(admin))
        made.raise_for_status()
        gate = asyncio.Semaphore(16)

        async def player(token: str) -> str:
            async with gate:
                asked = await client.post(f"{base}/challenge", headers=_bearer(token))
                challenge = asked.raise_for_status().json()["challenge"]
                answer = {"challenge": challenge, "answer": solve(challenge)}
                path = await client.post(f"{base}/path", json=answer, headers=_bearer(token))
                return f"{token} {path.raise_for_status().json()['path']}"

        return await asyncio.gather(*(player(token) for token in tokens))


def sell_out(server: Server, players: list[str]) -> dict[str, int]:
    """The first players buy the units one after another, and a few more hear sold out."""
    answers: Counter[str] = Counter()
    with httpx.Client(base_url=server.url, timeout=10) as client:
        for line in players[:FLASH_TRIES]:
            token, path = line.split()
            bought = client.post(
                f"/api/flash-sales/{FLASH_SALE}/{path}/purchase", headers=_bearer(token)
            )
            answers[bought.raise_for_status().json()["status"]] += 1
    if answers != {"queued": FLASH_UNITS, "sold_out": FLASH_TRIES - FLASH_UNITS}:
        raise SystemExit(f"selling the sale out answered {dict(answers)}")
    return dict(answers)


def flash_pairs(server: Server, args: argparse.Namespace, players: Path) -> list[dict[str, Any]]:
    """A warm-up (each worker marks the sale sold out), then --pairs pairs of a sold-out run
    and a health run, each with its CPU."""

    def sold_out(seconds: float) -> dict[str, Any]:
        threads = str(args.wrk_threads)
        return run_wrk(
            server.url, "flash.lua", seconds, args, str(players), str(FLASH_SALE), threads
        )

    def health(seconds: float) -> dict[str, Any]:
        return run_wrk(server.url + "/api/health", "health.lua", seconds, args)

    print(f"warm-up {args.warmup:g} s")
    sold_out(args.warmup)
    health(min(args.warmup, 2))
    print(f"machine busy before the pairs: {wait_for_idle(args.idle_wait)}")
    pairs = []
    for n in range(args.pairs):
        print(f"pair {n + 1}: sold out {args.seconds:g} s, health {args.health_seconds:g} s")
        pair: dict[str, Any] = {}
        pair["sold out"], pair["cpu during sold out"] = measured(
            lambda: sold_out(args.seconds), server
        )
        pair["health"], pair["cpu during health"] = measured(
            lambda: health(args.health_seconds), server
        )
        pairs.append(pair)
    return pairs


def run_flash(args: argparse.Namespace, tmp: Path, backend: Backend) -> dict[str, Any]:
    """Issue 18's question in one run: sold-out purchases/s against health req/s, on the
    backend's databases and Redis and a throwaway RabbitMQ (the purchases it is sold out
    with wait there: no worker consumes them, and the system's broker is left alone)."""
    sys.path.append(str(ROOT))
    from tests.services import RabbitMQServer

    env = server_env(args, backend)
    report: dict[str, Any] = {"config": {**run_config(args, tmp, backend), "flash": True}}
    broker = RabbitMQServer()
    try:
        broker.start()
        env.update(flash_env(broker.url))
        print(f"preparing {backend.name} in {tmp}, RabbitMQ on {broker.url}")
        raffle_cli(env, "migrate")
        started = time.monotonic()
        tokens = asyncio.run(create_users_and_sessions(backend, range(args.users), False))
        admin = asyncio.run(admin_token(backend))
        print(f"  {args.users:,} users and sessions in {time.monotonic() - started:.1f} s")
        server = start_server(env, args.workers, tmp)
        try:
            print(f"server on {server.url}, workers {server.worker_pids()}")
            players = asyncio.run(flash_players(server.url, admin, tokens))
            file = tmp / "players.txt"
            file.write_text("\n".join(players) + "\n")
            report["sold"] = sell_out(server, players)
            report["pairs"] = flash_pairs(server, args, file)
            if args.profile:
                report["sold out under py-spy"], report["profile"] = profiled(
                    server, args,
                    lambda seconds: run_wrk(
                        server.url, "flash.lua", seconds, args, str(file), str(FLASH_SALE),
                        str(args.wrk_threads),
                    ),
                )  # fmt: skip
        finally:
            server.stop()
        report["server errors"] = server_errors(server.log)
    finally:
        broker.close()
    return report


def _cpu_ms(run: dict[str, Any]) -> float:
    per = run["cpu_ms_per_request"]
    return float(per["raffle workers"] + per["database + redis servers"])


def print_flash(report: dict[str, Any]) -> None:
    cfg = report["config"]
    print()
    print(
        f"== flash sale sold out: {cfg['backend']}, {cfg['databases']} database(s) x "
        f"{cfg['shard_tables']}, redis {'yes' if cfg['redis'] else 'no'}, RabbitMQ, "
        f"{cfg['workers']} worker(s), {cfg['connections']} connections, {cfg['users']:,} "
        f"players; {cfg['git']}; sold out with {report['sold']}"
    )
    print(f"{'run':<16}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'CPU ms':>8}  answers")
    for n, pair in enumerate(report["pairs"], 1):
        for name in ("sold out", "health"):
            r = pair[name]
            answers = ", ".join(f"{k}: {v:,}" for k, v in r["statuses"].items())
            print(
                f"{name + f' {n}':<16}{r['rps']:>10,.0f}{r['latency_ms']['p50']:>9.1f}"
                f"{r['latency_ms']['p99']:>9.1f}{_cpu_ms(r):>8.2f}  "
                f"{answers or 'non-2xx: ' + str(r['non_2xx'])}"
            )
        print(
            f"  pair {n}: sold out / health {pair['sold out']['rps'] / pair['health']['rps']:.2f}"
        )
    pairs = report["pairs"]
    for name in ("sold out", "health"):
        print_cpu(name, pairs[-1][f"cpu during {name}"], pairs[-1][name])
    sold = sum(p["sold out"]["rps"] for p in pairs)
    health = sum(p["health"]["rps"] for p in pairs)
    cpu = [_cpu_ms(p["sold out"]) for p in pairs]
    print(
        f"sold-out purchases/s / health req/s: {sold / health:.2f} (sums over {len(pairs)} "
        f"pairs); CPU per sold-out purchase {min(cpu):.2f}-{max(cpu):.2f} ms, per health "
        f"request {min(_cpu_ms(p['health']) for p in pairs):.2f}-"
        f"{max(_cpu_ms(p['health']) for p in pairs):.2f} ms (workers + database + Redis)"
    )
    if errors := report.get("server errors"):
        print("server exceptions: " + json.dumps(errors, ensure_ascii=False))
    if profile := report.get("profile"):
        print_profile(profile)


def flash_failed(report: dict[str, Any]) -> bool:
    """A sold-out run that answered anything but 200 measured an error page."""
    runs = [p["sold out"] for p in report["pairs"]]
    return any(set(r["statuses"]) != {"200"} or r["non_2xx"] for r in runs)


# ---------------------------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--backend", choices=["embedded", "postgres", "mariadb"], default="embedded"
    )
    parser.add_argument("--shards", type=int, choices=[1, 2], default=2, help="databases")
    parser.add_argument("--tables", type=int, default=4, help="shard tables per database")
    parser.add_argument(
        "--pool-size",
        type=int,
        default=0,
        help="RAFFLE_POOL_SIZE for the server (overflow: up to 30 per pool); on PostgreSQL "
        "the draws hold no pool connection (their lanes and the stock claims keep their own, "
        "postgres/lane.py): the pools serve the other endpoints; 0 (default) leaves the "
        "server's default (10)",
    )
    parser.add_argument(
        "--pg-set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="ALTER DATABASE ... SET NAME = VALUE on the bench's PostgreSQL databases "
        "(repeatable), e.g. commit_delay=200 commit_siblings=2",
    )
    parser.add_argument("--no-redis", action="store_true", help="postgres/mariadb without Redis")
    parser.add_argument(
        "--deliveries",
        choices=["worker", "inline"],
        help="worker (default with Redis): the production layout, RAFFLE_BROKER_URL set, so the "
        "server only draws and `raffle worker` delivers (none runs during the bench: the wins "
        "wait in the outbox, as at a peak; bench/delivery_rate.py measures delivering); "
        "inline (default otherwise): the server also delivers, in-process",
    )
    parser.add_argument(
        "--first-visits",
        choices=["before", "during"],
        default="before",
        help="before (default): every user's account is opened (welcome pack) as the users are "
        "made, so the run measures steady draws; during: a launch, each user's first draw "
        f"opens it, in the measured run (the warm-up draws as {WARM_USERS} users of its own, "
        "who visited before); with --users at least the run's draws, every draw is a first "
        "visit",
    )
    parser.add_argument("--broker-url", default="amqp://guest:guest@127.0.0.1:5672/")
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument(
        "--workers",
        type=int,
        help="raffle serve --workers (default: 2 with Redis; 1 without, all serve allows)",
    )
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--wrk-threads", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=20, help="the measured draw run")
    parser.add_argument("--warmup", type=float, default=5)
    parser.add_argument("--health-seconds", type=float, default=10)
    parser.add_argument("--timeout", type=int, default=10, help="wrk's per-request timeout, s")
    parser.add_argument("--count-draws", type=int, default=200, help="in-process counted draws")
    parser.add_argument("--profile", type=Path, metavar="DIR", help="py-spy the workers into DIR")
    parser.add_argument("--profile-seconds", type=float, default=10)
    parser.add_argument(
        "--profile-all",
        action="store_true",
        help="py-spy every non-idle thread, not only the GIL holder",
    )
    parser.add_argument(
        "--native",
        action="store_true",
        help="py-spy --native: Cython and C frames too (else counted as their caller's self time)",
    )
    parser.add_argument(
        "--refusals",
        action="store_true",
        help="draws of users with no chance left (each spent its one chance before): refusals/s",
    )
    parser.add_argument(
        "--policies",
        action="store_true",
        help="after the draws, as many seconds of draws by the same users in an activity with "
        "two participation policies (a dynamic tag's first, then everyone's joins and wins "
        "counted per day, read and written in every draw's transaction), then the plain "
        "activity's again: the rate against the plain runs' mean, in one run",
    )
    parser.add_argument(
        "--request-log",
        action="store_true",
        help="the server logs a line per request (RAFFLE_LOG_LEVEL=info); without it the "
        "level is warning, so draws are measured as before the request log existed",
    )
    parser.add_argument(
        "--flash",
        action="store_true",
        help="a flash sale sold out through the API, then --pairs pairs of sold-out purchases "
        "(bench/flash.lua: each player their own token and path) and health, alternated "
        "(--seconds and --health-seconds each), on a throwaway RabbitMQ: issue 18's ratio",
    )
    parser.add_argument(
        "--pairs",
        type=int,
        help="draw (or refusal, or sold-out) and health runs alternated this many times in one "
        "server; the summary's ratio is of the sums (default 1, --flash 3)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the numbers here")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir and databases")
    parser.add_argument("--tmpdir", type=Path, help="where the temp dir (and SQLite file) goes")
    parser.add_argument(
        "--idle-wait", type=float, default=30, help="wait this long at most for a quiet machine"
    )
    parser.add_argument("--postgres-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--mariadb-url", default="mysql://root@127.0.0.1:3306/")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379")
    parser.add_argument("--redis-db", type=int, default=13, help="flushed at start and end")
    args = parser.parse_args()
    if args.workers is None:
        args.workers = 1 if args.backend == "embedded" or args.no_redis else 2
    if args.deliveries is None:
        args.deliveries = "inline" if args.backend == "embedded" or args.no_redis else "worker"
    if args.backend == "embedded" and args.shards == 2 and "--shards" not in sys.argv:
        args.shards = 1  # the embedded default is one SQLite file
    if args.backend == "embedded" and "--tables" not in sys.argv:
        args.tables = 1
    if not shutil.which("wrk"):
        parser.error("wrk is not installed: apt-get install -y wrk")
    return args


class Overran(Exception):
    pass


def _overran(*_: Any) -> None:
    raise Overran("the bench took longer than its time budget")


@contextlib.contextmanager
def time_budget(seconds: float) -> Iterator[None]:
    """Whatever happens, the run stops by itself: SIGALRM interrupts it and cleanup runs."""
    previous = signal.signal(signal.SIGALRM, _overran)
    signal.alarm(int(seconds))
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def profiled(
    server: Server, args: argparse.Namespace, load: Callable[[float], dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A `load` run (draws, or sold-out purchases) with py-spy on every worker: the run's
    numbers, and the samples' breakdown. Leaves worker-N.txt (collapsed stacks) and
    worker-N.speedscope.json in --profile DIR."""
    print(f"under py-spy {args.profile_seconds:g} s -> {args.profile}")
    pids = server.worker_pids()
    spies = start_profilers(
        pids, args.profile_seconds, args.profile, gil=not args.profile_all, native=args.native
    )
    result = load(args.profile_seconds + 1)
    for spy in spies:
        _, err = spy.communicate(timeout=60)
        if spy.returncode != 0:
            print(f"py-spy failed: {err.decode(errors='replace')}", file=sys.stderr)
    raws = sorted(args.profile.glob("worker-*.txt"))
    for raw in raws:
        write_speedscope(raw, raw.with_suffix(".speedscope.json"))
    profile = analyse_profile(raws)
    profile["mode"] = "every non-idle thread" if args.profile_all else "the thread holding the GIL"
    return result, profile


def _git_state() -> str:
    """The commit measured, and whether src/ had uncommitted changes (read-only git)."""

    def git(*argv: str) -> str:
        done = subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    dirty = git("status", "--porcelain", "--", "src")
    return git("rev-parse", "--short", "HEAD") + (" + uncommitted src changes" if dirty else "")


def server_env(args: argparse.Namespace, backend: Backend) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAFFLE_")}
    env.update(backend.env())
    env["RAFFLE_DRAWS_PER_SECOND"] = "1000000"  # the per-user limit must not interfere
    env["RAFFLE_LOAD_DEMO"] = "false"
    env["RAFFLE_LOG_LEVEL"] = "info" if args.request_log else "warning"
    if args.deliveries == "worker":
        env["RAFFLE_BROKER_URL"] = _loopback(args.broker_url)
    if args.pool_size:  # pools the connections each worker keeps (settings.py)
        env["RAFFLE_POOL_SIZE"] = str(args.pool_size)
        env["RAFFLE_POOL_OVERFLOW"] = str(max(0, 30 - args.pool_size))
    return env


def run_config(args: argparse.Namespace, tmp: Path, backend: Backend) -> dict[str, Any]:
    return {
        "backend": backend.name,
        "databases": len(backend.database_urls),
        "shard_tables": backend.shard_tables,
        "redis": backend.redis_url is not None,
        "workers": args.workers,
        "request_log": args.request_log,
        "deliveries": args.deliveries,
        "first_visits": args.first_visits,
        "refusals": args.refusals,
        "policies": args.policies,
        "pg_set": args.pg_set,
        "pool_size": args.pool_size,
        "connections": args.connections,
        "wrk_threads": args.wrk_threads,
        "users": args.users,
        "seconds": args.seconds,
        "cpus": os.cpu_count(),
        "git": _git_state(),
        "temp_dir": str(tmp),
    }


def measured_pair(
    server: Server,
    args: argparse.Namespace,
    backend: Backend,
    tokens: Path,
    report: dict[str, Any],
    n: int,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A draw run and a health run; the first pair's are the report's `draws` and `health`
    (with `--policies`, its policy runs between them)."""
    busy = wait_for_idle(args.idle_wait)
    pair = f" (pair {n + 1})" if n else ""
    print(f"draws {args.seconds:g} s, {args.connections} connections{pair}")
    counters = asyncio.run(_server_counters(backend))
    draws, cpu = measured(lambda: draw_load(server, args, tokens, args.seconds, "draws"), server)
    if db := server_counters_since(backend, counters, draws["requests"]):
        draws["database_per_request"] = db
    if n == 0:
        report["busy before draws"], report["draws"], report["cpu during draws"] = busy, draws, cpu
        if args.policies:
            report["answered by policies"] = policy_draws(server, args, tokens, report)
        report["busy before health"] = wait_for_idle(args.idle_wait)
    print(f"health {args.health_seconds:g} s")
    health, cpu = measured(
        lambda: run_wrk(server.url + "/api/health", "health.lua", args.health_seconds, args),
        server,
    )
    if n == 0:
        report["health"], report["cpu during health"] = health, cpu
    return draws, health


def run(args: argparse.Namespace, tmp: Path, backend: Backend) -> dict[str, Any]:
    env = server_env(args, backend)
    report: dict[str, Any] = {"config": run_config(args, tmp, backend)}
    print(f"preparing {backend.name} in {tmp}")
    raffle_cli(env, "migrate")
    raffle_cli(env, "load", str(CAMPAIGN))
    tokens, warm_tokens = make_players(args, tmp, backend)
    server = start_server(env, args.workers, tmp)
    answered = 0
    try:
        print(f"server on {server.url}, workers {server.worker_pids()}")
        report["sanity"] = sanity_check(server)
        answered += 1
        print(f"warm-up {args.warmup:g} s")
        warmed = draw_load(server, args, warm_tokens, args.warmup, "warm")
        answered += warmed["statuses"].get("201", 0)
        report["rounds"] = []
        for n in range(args.pairs or 1):
            draws, health = measured_pair(server, args, backend, tokens, report, n)
            answered += draws["statuses"].get("201", 0)
            report["rounds"].append({"draws": draws["rps"], "health": health["rps"]})
        answered += report.get("answered by policies", 0)
        if args.profile:
            report["draws under py-spy"], report["profile"] = profiled(
                server, args, lambda seconds: draw_load(server, args, tokens, seconds, "profile")
            )
            answered += report["draws under py-spy"]["statuses"].get("201", 0)
    finally:
        server.stop()
    report["answered 201"] = answered
    report["server errors"] = server_errors(server.log)
    report["integrity"] = asyncio.run(integrity(backend))
    report["orders against answers"] = orders_against_answers(args, report)
    if args.count_draws:
        report["statements"] = asyncio.run(statements_per_draw(backend, args.count_draws))
    return report


def main() -> None:
    args = parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="raffle-bench-", dir=args.tmpdir))
    budget = 300 + args.warmup + args.seconds + args.health_seconds + args.profile_seconds
    budget += 2 * args.idle_wait
    if args.flash:
        args.pairs = args.pairs or 3
        budget += args.pairs * (args.seconds + args.health_seconds)
    else:  # the first pair is counted above
        budget += ((args.pairs or 1) - 1) * (
            args.seconds + args.health_seconds + 2 * args.idle_wait
        )
    backend: Backend | None = None
    try:
        with time_budget(budget + args.users / 20):
            backend = make_backend(args, tmp)
            report = (run_flash if args.flash else run)(args, tmp, backend)
    finally:
        if not args.keep:
            if backend is not None:
                backend.cleanup()
            shutil.rmtree(tmp, ignore_errors=True)
        elif backend is not None:
            print(f"kept {tmp} and {backend.database_urls}")
    (print_flash if args.flash else print_summary)(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str) + "\n")
        print(f"wrote {args.json}")
    if args.flash:
        if flash_failed(report):
            raise SystemExit("a sold-out run answered something else than 200")
        return
    if not report["orders against answers"]["ok"] or report["integrity"]["oversold"]:
        raise SystemExit("the stored orders do not match the answers, or a prize was oversold")


if __name__ == "__main__":
    main()
