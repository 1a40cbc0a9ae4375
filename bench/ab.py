"""Two commits' servers side by side, their draws measured in short runs taken in turn.

    python bench/ab.py --before /tmp/before --after . [--rounds 8] [--seconds 5]

A before/after comparison by separate `http.py` runs spreads with the machine's drift (2x
within an hour here): this one prepares each side once (its own `bench/http.py --keep`, so
each commit migrates, loads and makes users with its own code, on databases and a Redis db
of its own), starts both servers (`raffle serve --workers 2`, the before side on its own
`src`), and then alternates short wrk runs of the same draws between them, the order
swapped each round, so that both sides meet the same machine. Prints each round's draws/s
and the ratio of the sums. The databases are dropped and the Redis dbs flushed at the end.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import util
from pathlib import Path
from typing import Any

import redis

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

# bench/http.py's server and wrk helpers, loaded under a name that does not shadow the
# standard library's http.
_spec = util.spec_from_file_location("bench_http", BENCH / "http.py")
assert _spec is not None
assert _spec.loader is not None
bench_http = sys.modules["bench_http"] = util.module_from_spec(_spec)
_spec.loader.exec_module(bench_http)

PYTHON = ROOT / ".venv" / "bin" / "python"
SIDES = {"before": 12, "after": 14}  # their Redis dbs
ADMIN = "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"  # http.py's default server


@dataclass
class Side:
    """One commit's prepared data: its work tree, http.py's temp dir and its databases."""

    name: str
    tree: Path
    tmp: Path
    backend: Any  # bench_http.Backend

    @property
    def tokens(self) -> Path:
        return self.tmp / "tokens.txt"

    def cleanup(self) -> None:
        for url in self.backend.database_urls:
            name = url.rsplit("/", 1)[1]
            asyncio.run(bench_http._autocommit(ADMIN, bench_http.DROP["postgres"].format(name)))
        redis.Redis.from_url(self.backend.redis_url).flushdb()
        shutil.rmtree(self.tmp, ignore_errors=True)


def prepare(name: str, tree: Path, args: argparse.Namespace) -> Side:
    """`tree`'s own http.py run once with --keep: its databases, Redis db and tokens."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAFFLE_")}
    env["PYTHONPATH"] = str(tree / "src")
    command = [
        str(PYTHON), "bench/http.py", "--backend", "postgres", "--keep", "--seconds", "2",
        "--health-seconds", "1", "--warmup", "1", "--count-draws", "0", "--idle-wait", "1",
        "--redis-db", str(SIDES[name]), "--users", str(args.users),
    ]  # fmt: skip
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
    kept = re.search(r"^kept (\S+) and (\[.*\])$", done.stdout, re.MULTILINE)
    if kept is None:
        raise SystemExit(f"{name}: http.py --keep failed:\n{done.stdout[-3000:]}{done.stderr}")
    urls = ast.literal_eval(kept.group(2))
    redis_url = f"redis://127.0.0.1:6379/{SIDES[name]}"
    return Side(name, tree, Path(kept.group(1)), bench_http.Backend("postgres", urls, 4, redis_url))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="a work tree of the commit")
    parser.add_argument("--after", type=Path, default=ROOT)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument(
        "--idle-seconds", type=float, default=10, help="each server's CPU with no load, first"
    )
    args = parser.parse_args()
    # What http.py's server_env and draw_load read: its defaults for a PostgreSQL run.
    run = argparse.Namespace(
        request_log=False, deliveries="worker", broker_url="amqp://guest:guest@127.0.0.1:5672/",
        pool_size=None, wrk_threads=2, connections=args.connections, timeout=10, refusals=False,
    )  # fmt: skip
    sides: list[Side] = []
    servers = {}
    try:
        for name, tree in (("before", args.before), ("after", args.after)):
            sides.append(side := prepare(name, tree.resolve(), args))
            env = {**bench_http.server_env(run, side.backend), "PYTHONPATH": str(side.tree / "src")}
            servers[name] = bench_http.start_server(env, 2, side.tmp)
            print(f"{name}: {servers[name].url}, {side.tmp}")
        idle(servers, args.idle_seconds)
        tokens = {side.name: side.tokens for side in sides}
        for name, server in servers.items():  # warm-up
            bench_http.draw_load(server, run, tokens[name], 3, "warm")
        rates: dict[str, list[float]] = {"before": [], "after": []}
        for n in range(args.rounds):
            for name in ("before", "after") if n % 2 == 0 else ("after", "before"):
                drawn = bench_http.draw_load(servers[name], run, tokens[name], args.seconds, "ab")
                rates[name].append(drawn["rps"])
            before, after = rates["before"][-1], rates["after"][-1]
            print(f"round {n + 1}: before {before:,.0f}, after {after:,.0f} draws/s", end="")
            print(f": {after / before:.2f}")
        ratio = sum(rates["after"]) / sum(rates["before"])
        print(f"after / before, summed over {args.rounds} rounds: {ratio:.3f}")
    finally:
        for server in servers.values():
            server.stop()
        for side in sides:
            side.cleanup()


def idle(servers: dict[str, Any], seconds: float) -> None:
    """What each server's workers spend with no request: their background jobs and looks,
    which the server being measured shares its cores with."""
    time.sleep(2)
    start = {name: _cpu(server) for name, server in servers.items()}
    time.sleep(seconds)
    for name, server in servers.items():
        used = _cpu(server) - start[name]
        print(f"{name}: workers idle {used / seconds * 1000:.0f} ms of CPU a second")


def _cpu(server: Any) -> float:
    found = (bench_http._cpu_seconds(pid) for pid in server.worker_pids())
    return sum(seconds for _, seconds in filter(None, found))


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    main()
