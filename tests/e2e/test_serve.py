"""`raffle serve` as the quick start runs it: embedded SQLite, migrated, the demo loaded."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

RAFFLE = Path(sys.executable).parent / "raffle"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_starts_the_embedded_default_with_a_running_demo(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "RAFFLE_DATABASE_URL": f"sqlite:///{tmp_path / 'raffle.db'}",
        "RAFFLE_PORT": str(port),
    }
    server = subprocess.Popen([str(RAFFLE), "serve"], env=env, cwd=tmp_path)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/api/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "raffle serve did not answer within 60 s"
            time.sleep(0.2)
        demo = httpx.get(f"{base}/api/activities/100301", timeout=5).json()
        assert demo["activity"]["state"] == "running"
        assert len(demo["prizes"]) == 9
        assert httpx.get(f"{base}/openapi.json", timeout=5).json()["info"]["title"] == "raffle"
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_serve_refuses_several_workers_without_redis(tmp_path: Path) -> None:
    env = {**os.environ, "RAFFLE_DATABASE_URL": f"sqlite:///{tmp_path / 'raffle.db'}"}
    done = subprocess.run(
        [str(RAFFLE), "serve", "--workers", "2"],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "needs RAFFLE_REDIS_URL" in done.stderr
