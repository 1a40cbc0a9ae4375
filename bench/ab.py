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
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from importlib import util
from pathlib import Path

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


def prepare(name: str, tree: Path, args: argparse.Namespace) -> dict[str, str]:
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
    return {
        "tmp": kept.group(1),
        "PYTHONPATH": str(tree / "src"),
        "RAFFLE_DATABASE_URL": urls[0],
        "RAFFLE_SHARD_URLS": ",".join(urls[1:]),
        "RAFFLE_SHARD_TABLES": "4",
        "RAFFLE_REDIS_URL": f"redis://127.0.0.1:6379/{SIDES[name]}",
        "RAFFLE_BROKER_URL": "amqp://guest:guest@127.0.0.1:5672/",
        "RAFFLE_DRAWS_PER_SECOND": "1000000",
        "RAFFLE_LOAD_DEMO": "false",
        "RAFFLE_LOG_LEVEL": "warning",
    }


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
    wrk = argparse.Namespace(wrk_threads=2, connections=args.connections, timeout=10)
    prepared = {
        "before": prepare("before", args.before.resolve(), args),
        "after": prepare("after", args.after.resolve(), args),
    }
    servers = {}
    try:
        for name, env in prepared.items():
            tmp = Path(env["tmp"])
            base = {k: v for k, v in os.environ.items() if not k.startswith("RAFFLE_")}
            servers[name] = bench_http.start_server(
                {**base, **{k: v for k, v in env.items() if k != "tmp"}}, 2, tmp
            )
            print(f"{name}: {servers[name].url}, {tmp}")
        idle(servers, args.idle_seconds)
        rates: dict[str, list[float]] = {"before": [], "after": []}
        for name, server in servers.items():  # warm-up
            bench_http.draw_load(server, wrk_args(wrk), tokens(prepared[name]), 3, "warm")
        for n in range(args.rounds):
            order = ["before", "after"] if n % 2 == 0 else ["after", "before"]
            for name in order:
                run = bench_http.draw_load(
                    servers[name], wrk_args(wrk), tokens(prepared[name]), args.seconds, "ab"
                )
                rates[name].append(run["rps"])
            print(
                f"round {n + 1}: before {rates['before'][-1]:,.0f}, after "
                f"{rates['after'][-1]:,.0f} draws/s: {rates['after'][-1] / rates['before'][-1]:.2f}"
            )
        ratio = sum(rates["after"]) / sum(rates["before"])
        print(f"after / before, summed over {args.rounds} rounds: {ratio:.3f}")
    finally:
        for server in servers.values():
            server.stop()
        for name, env in prepared.items():
            cleanup(env, SIDES[name])


def idle(servers: dict[str, bench_http.Server], seconds: float) -> None:
    """What each server's workers spend with no request: their background jobs and looks,
    which the server being measured shares its cores with."""
    time.sleep(2)
    start = {name: _cpu(server) for name, server in servers.items()}
    time.sleep(seconds)
    for name, server in servers.items():
        used = _cpu(server) - start[name]
        print(f"{name}: workers idle {used / seconds * 1000:.0f} ms of CPU a second")


def _cpu(server: bench_http.Server) -> float:
    found = (bench_http._cpu_seconds(pid) for pid in server.worker_pids())
    return sum(seconds for _, seconds in filter(None, found))


def wrk_args(wrk: argparse.Namespace) -> argparse.Namespace:
    return argparse.Namespace(**vars(wrk), refusals=False)


def tokens(env: dict[str, str]) -> Path:
    return Path(env["tmp"]) / "tokens.txt"


def cleanup(env: dict[str, str], redis_db: int) -> None:
    import redis

    for url in [env["RAFFLE_DATABASE_URL"], *env["RAFFLE_SHARD_URLS"].split(",")]:
        name = url.rsplit("/", 1)[1]
        subprocess.run(
            ["psql", "-h", "127.0.0.1", "-U", "postgres", "-c", f"DROP DATABASE IF EXISTS {name}"],
            capture_output=True,
            check=False,
        )
    redis.Redis.from_url(f"redis://127.0.0.1:6379/{redis_db}").flushdb()
    shutil.rmtree(env["tmp"], ignore_errors=True)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    main()
