"""`raffle serve` as the quick start runs it: embedded SQLite, migrated, the demo loaded."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import IO

import httpx

from tests.raffle_process import RAFFLE, wait_until_serving
from tests.services import free_port


def test_serve_starts_the_embedded_default_with_a_running_demo(
    tmp_path: Path, server_stderr: IO[str]
) -> None:
    port = free_port()
    env = {
        **os.environ,
        "RAFFLE_DATABASE_URL": f"sqlite:///{tmp_path / 'raffle.db'}",
        "RAFFLE_PORT": str(port),
        "RAFFLE_LOG_FORMAT": "json",
    }
    server = subprocess.Popen([str(RAFFLE), "serve"], env=env, cwd=tmp_path, stderr=server_stderr)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_serving(base, server)
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


def test_demo_prints_each_page_and_an_operator_that_can_log_in(
    tmp_path: Path, server_stderr: IO[str]
) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAFFLE_")}
    env["RAFFLE_PORT"] = str(port)
    env["RAFFLE_LOG_FORMAT"] = "json"
    demo = subprocess.Popen(
        [str(RAFFLE), "demo"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=server_stderr,
        text=True,
    )
    try:
        assert demo.stdout is not None
        lines = [demo.stdout.readline() for _ in range(5)]
        found = [re.match(r"\s+(\S.*?)\s{2,}(http\S+)", line) for line in lines[1:]]
        urls = {m.group(1): m.group(2) for m in found if m}
        base = f"http://127.0.0.1:{port}"
        simulator = urls.pop("Alipay simulator")
        assert urls == {
            "player page": f"{base}/",
            "operator console": f"{base}/console",
            "API": f"{base}/docs",
        }
        name, password = lines[2].split("log in as ")[1].rstrip(")\n").split(" / ")
        wait_until_serving(base, demo)
        page = httpx.get(urls["player page"])
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert (
            "<title>raffle · operator console</title>" in httpx.get(urls["operator console"]).text
        )
        assert httpx.get(f"{base}/api/activities/100301").json()["activity"]["state"] == "running"
        login = httpx.post(f"{base}/api/auth/login", json={"name": name, "password": password})
        token = login.json()["token"]
        me = httpx.get(f"{base}/api/auth/me", headers={"Authorization": f"Bearer {token}"})
        assert me.json()["is_admin"] is True
        # Payments go to the simulator the demo started: its content is for sale there.
        (course,) = httpx.get(f"{base}/api/content").json()
        assert course["buy"] == "/api/payments/orders"
        assert httpx.get(f"{simulator}_sim/calls").status_code == 200
        assert not list(tmp_path.iterdir()), "the demo's database lives in a temporary folder"
    finally:
        demo.terminate()
        demo.wait(timeout=30)
        if demo.stdout is not None:
            demo.stdout.close()
