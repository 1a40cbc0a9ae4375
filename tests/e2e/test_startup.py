"""`raffle serve` and `raffle worker` as an operator starts them: a service that does not
answer, or a bad setting, ends the command with one line naming the setting to fix."""

from __future__ import annotations

import os
import subprocess
from importlib.metadata import version
from pathlib import Path

import httpx

from tests.raffle_process import RAFFLE, wait_until_serving
from tests.services import LOOPBACK, free_port

SECRET = "s3cret-pw"


def _raffle(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RAFFLE_")}
    clean["RAFFLE_DATABASE_URL"] = f"sqlite:///{tmp_path / 'raffle.db'}"
    return subprocess.run(
        [str(RAFFLE), *args],
        check=False,
        env=clean | env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,  # a hang fails; the probes give each service 2 s
    )


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr  # no traceback, no log lines
    assert "raffle on http" not in done.stdout + done.stderr
    assert SECRET not in done.stderr
    return lines[0]


def _nothing_at() -> str:
    """An address where nothing listens: a server that is stopped."""
    return f"{LOOPBACK}:{free_port()}"


def test_serve_with_the_database_stopped_names_its_setting(tmp_path: Path) -> None:
    at = _nothing_at()
    url = f"postgresql://raffle:{SECRET}@{at}/raffle"
    line = _one_line(_raffle(tmp_path, "serve", RAFFLE_DATABASE_URL=url))
    assert line == (
        f"raffle: cannot reach the database at RAFFLE_DATABASE_URL "
        f"(postgresql+asyncpg://raffle:***@{at}/raffle, password hidden): connection refused"
    )


def test_serve_with_redis_stopped_names_its_setting(tmp_path: Path) -> None:
    at = _nothing_at()
    line = _one_line(_raffle(tmp_path, "serve", RAFFLE_REDIS_URL=f"redis://{at}/0"))
    assert (
        line
        == f"raffle: cannot reach Redis at RAFFLE_REDIS_URL (redis://{at}/0): connection refused"
    )


def test_worker_with_the_broker_stopped_names_its_setting(tmp_path: Path) -> None:
    at = _nothing_at()
    url = f"amqp://guest:{SECRET}@{at}/"
    line = _one_line(_raffle(tmp_path, "worker", RAFFLE_BROKER_URL=url))
    assert line.startswith(
        f"raffle: cannot reach the broker at RAFFLE_BROKER_URL (amqp://guest:***@{at}/"
    )
    assert line.endswith("connection refused")


def test_worker_with_a_shard_stopped_names_its_setting(tmp_path: Path) -> None:
    at = _nothing_at()
    url = f"mysql://root:{SECRET}@{at}/raffle"
    line = _one_line(_raffle(tmp_path, "worker", RAFFLE_SHARD_URLS=url))
    assert line.startswith("raffle: cannot reach shard database 1 at RAFFLE_SHARD_URLS (")
    assert line.endswith(": connection refused")


def test_a_bad_setting_names_the_variable_and_the_form_expected(tmp_path: Path) -> None:
    for command in ("serve", "worker"):
        line = _one_line(_raffle(tmp_path, command, RAFFLE_DRAWS_PER_SECOND="abc"))
        assert line == (
            "raffle: RAFFLE_DRAWS_PER_SECOND must be a whole number "
            "(as in RAFFLE_DRAWS_PER_SECOND=10)"
        )


def test_version(tmp_path: Path) -> None:
    done = _raffle(tmp_path, "--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"raffle {version('raffle')}"


def test_serve_listens_where_told_and_answers_live_and_ready(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAFFLE_")}
    env["RAFFLE_DATABASE_URL"] = f"sqlite:///{tmp_path / 'raffle.db'}"
    env["RAFFLE_PORT"] = str(free_port())  # the option wins over the setting
    command = [str(RAFFLE), "serve", "--host", LOOPBACK, "--port", str(port)]
    server = subprocess.Popen(command, env=env, cwd=tmp_path)
    try:
        base = f"http://{LOOPBACK}:{port}"
        wait_until_serving(base, server)
        assert httpx.get(f"{base}/api/health/live", timeout=5).json() == {"status": "ok"}
        ready = httpx.get(f"{base}/api/health/ready", timeout=5)
        assert ready.status_code == 200
        assert ready.json() == {"status": "ready", "services": {"database": "ok"}}
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_serve_refuses_several_workers_on_sqlite(tmp_path: Path) -> None:
    redis = f"redis://{_nothing_at()}/0"  # refused before any service is tried
    line = _one_line(_raffle(tmp_path, "serve", "--workers", "2", RAFFLE_REDIS_URL=redis))
    assert line.endswith(
        "more than one worker needs PostgreSQL or MariaDB (RAFFLE_DATABASE_URL is SQLite)"
    )
    assert not (tmp_path / "raffle.db").exists()  # nothing was made
