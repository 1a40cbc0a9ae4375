"""docs/production.md's "Without containers" blocks, run as written: a first draw is delivered."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from redis import Redis
from sqlalchemy.engine import make_url

from tests.integration.delivery_world import fresh_queues
from tests.services import free_port

ROOT = Path(__file__).parents[2]
GUIDE = ROOT / "docs" / "production.md"
OPERATOR_PASSWORD = "operator-pass-42"


def guide_blocks() -> list[str]:
    """The fenced sh blocks of the guide's "Without containers" section, in order."""
    section = GUIDE.read_text().split("\n## Without containers\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)


def test_the_guide_has_the_three_blocks_this_test_runs() -> None:
    setup, processes, first_draw = guide_blocks()
    assert "raffle migrate" in setup
    assert "raffle user create operator --admin" in setup
    assert [line.split()[:2] for line in processes.splitlines()] == [
        ["raffle", "serve"],
        ["raffle", "worker"],
    ]
    assert '"state":"completed"' in first_draw


class Guide:
    """The guide's blocks with this test's servers, port and databases in place of its own."""

    def __init__(self, postgres: str, redis: str, rabbitmq: str, port: int) -> None:
        server = make_url(postgres)
        self.databases = [f"guide_{uuid.uuid4().hex[:12]}_{n}" for n in (0, 1)]
        user, host, pg_port = server.username or "postgres", server.host, server.port
        self.replacements = {
            "postgres@127.0.0.1:5432": f"{user}@{host}:{pg_port}",
            "-h 127.0.0.1 -p 5432 -U postgres": f"-h {host} -p {pg_port} -U {user}",
            "raffle_0": self.databases[0],
            "raffle_1": self.databases[1],
            "redis://127.0.0.1:6379/0": redis,
            "amqp://guest:guest@127.0.0.1:5672/": rabbitmq,
            "127.0.0.1:8000": f"127.0.0.1:{port}",
            "RAFFLE_PORT=8000": f"RAFFLE_PORT={port}",
        }
        self.password = server.password

    def blocks(self) -> list[str]:
        blocks = guide_blocks()
        for theirs in self.replacements:
            assert theirs in "".join(blocks), f"the guide no longer has {theirs}"
        for theirs, ours in self.replacements.items():
            blocks = [block.replace(theirs, ours) for block in blocks]
        for port in (":5432", ":6379", ":5672", ":8000"):  # the machine's own servers
            assert all(port not in block for block in blocks), port
        return blocks


def base_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAFFLE_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def run(script: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        check=False,
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=240,
        start_new_session=True,  # no terminal: the password prompt reads standard input
    )


@pytest.fixture
def guide(postgres_url: str, redis_url: str, rabbitmq_url: str) -> Iterator[Guide]:
    asyncio.run(fresh_queues(rabbitmq_url))  # no message of an earlier test for the worker
    with Redis.from_url(redis_url) as client:
        client.flushdb()  # the guide's Redis database: this test's alone while it runs
    made = Guide(postgres_url, redis_url, rabbitmq_url, free_port())
    yield made
    with Redis.from_url(redis_url) as client:
        client.flushdb()
    drop = [f"DROP DATABASE IF EXISTS {name} WITH (FORCE)" for name in made.databases]
    server = make_url(postgres_url)
    psql = ["psql", "-h", str(server.host), "-p", str(server.port), "-U", str(server.username)]
    for statement in drop:
        subprocess.run([*psql, "-d", "postgres", "-c", statement], check=True, timeout=60)


def test_following_the_guide_without_containers_delivers_a_first_draw(
    guide: Guide, tmp_path: Path
) -> None:
    setup, processes, first_draw = guide.blocks()
    env = base_environment() | ({"PGPASSWORD": guide.password} if guide.password else {})
    saved = tmp_path / "guide.env"
    typed = f"{OPERATOR_PASSWORD}\n{OPERATOR_PASSWORD}\n"
    done = run(f'{setup}\nenv -0 > "{saved}"', env, stdin=typed)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "created operator operator" in done.stdout
    exported = dict(item.split("=", 1) for item in saved.read_text().split("\0") if "=" in item)
    assert exported["RAFFLE_SHARD_TABLES"] == "4"

    started: list[subprocess.Popen[bytes]] = []
    try:
        for n, line in enumerate(processes.splitlines()):
            command = line.split("#")[0].strip().removesuffix("&").strip()
            with (tmp_path / f"process-{n}.log").open("wb") as log:
                started.append(
                    subprocess.Popen(
                        ["bash", "-c", f"exec {command}"],
                        cwd=ROOT,
                        env=exported,
                        stdout=log,
                        stderr=log,
                        start_new_session=True,
                    )
                )
        drawn = run(first_draw, exported)
        logs = "\n".join(p.read_text() for p in sorted(tmp_path.glob("process-*.log")))
        assert drawn.returncode == 0, drawn.stdout + drawn.stderr + logs
        assert drawn.stdout.count('"state":"completed"') == 1  # the last line's prize list
        assert all(process.poll() is None for process in started), logs

        base = f"http://{guide.replacements['127.0.0.1:8000']}"
        login = {"name": "operator", "password": OPERATOR_PASSWORD}
        token = httpx.post(f"{base}/api/auth/login", json=login, timeout=10).json()["token"]
        operator = {"Authorization": f"Bearer {token}"}
        assert httpx.get(f"{base}/api/auth/me", headers=operator).json()["is_admin"] is True
        counts = httpx.get(f"{base}/api/admin/deliveries/counts", headers=operator).json()
        assert (counts["records"], counts["completed"], counts["delivered"]) == (1, 1, 1)
    finally:
        for process in started:
            os.killpg(process.pid, signal.SIGTERM)
        for process in started:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
