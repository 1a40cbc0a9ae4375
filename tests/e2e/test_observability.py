"""`raffle serve --workers 2` watched from outside: a scripted run of draws, refusals and
deliveries, then /metrics (summed over both processes) against the counts the script
implies, and the log lines: one JSON line per request, its id echoed, no secret in any."""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from redis import Redis
from sqlalchemy.engine import make_url

from tests.conftest import CREATE_DATABASE, DROP_DATABASE, _execute_autocommit
from tests.raffle_process import RAFFLE, log_lines, server_errors, wait_until_serving
from tests.services import free_port

POINTS, COUPONS, NOT_OPEN = 730001, 730002, 730003
DRAWS = "/api/activities/{activity_id}/draws"
ATTEMPTS = 2  # RAFFLE_DELIVERY_ATTEMPTS: a coupon from an empty pool fails twice, then dead
WINDOW = "begin_at: 2026-01-01T00:00:00+08:00, end_at: 2030-01-01T00:00:00+08:00"
# Certain prizes with little stock, so the script knows every outcome: 3 × 5 points, then
# "thanks" (lose); 2 coupons from a pool emptied by hand (their delivery fails), then the
# fallback mug.
CAMPAIGN = f"""
awards:
  - {{id: 1, kind: thanks, title: Thanks for playing}}
  - {{id: 2, kind: points, title: Five points, config: "5"}}
  - {{id: 3, kind: coupon, title: Ten off, config: ten-off}}
  - {{id: 4, kind: physical, title: A mug}}
packs:
  - {{id: 71, total: 5, day: 5, month: 5}}
strategies:
  - {{id: 7301, fallback: {{award: 1}}, prizes: [{{award: 2, rate: 1, stock: 3}}]}}
  - {{id: 7302, fallback: {{award: 4}}, prizes: [{{award: 3, rate: 1, stock: 2}}]}}
activities:
  - {{id: {POINTS}, name: Points, strategy: 7301, state: running, welcome_pack: 71, {WINDOW}}}
  - {{id: {COUPONS}, name: Coupons, strategy: 7302, state: running, welcome_pack: 71, {WINDOW}}}
  - {{id: {NOT_OPEN}, name: Not yet, strategy: 7301, welcome_pack: 71, {WINDOW}}}
code_pools:
  ten-off: [TEN-1, TEN-2]
"""
Sample = tuple[str, frozenset[tuple[str, str]]]


@dataclass
class Run:
    """What the scripted run did, and what it saw."""

    base: str
    stderr: Path
    metrics: dict[Sample, float] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)  # passwords and tokens it used
    traced: httpx.Response | None = None  # a draw sent with an X-Request-ID of its own
    pages: int = 0  # GET /api/activities/{id} requests answered, to see both processes
    spare_folders: list[Path] = field(default_factory=list)  # metrics folders left after

    def log(self) -> str:
        return self.stderr.read_text()

    def requests(self) -> list[dict[str, object]]:
        return [line for line in log_lines(self.log()) if line.get("event") == "request"]

    def value(self, name: str, **labels: object) -> float:
        return self.metrics.get((name, _labels(labels)), 0.0)


def _labels(labels: dict[str, object]) -> frozenset[tuple[str, str]]:
    return frozenset((k, str(v)) for k, v in labels.items())


def _scrape(base: str) -> dict[Sample, float]:
    text = httpx.get(f"{base}/metrics", timeout=10).text
    return {
        (s.name, _labels(dict(s.labels))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _draw(base: str, activity: object, headers: dict[str, str]) -> httpx.Response:
    # No client kept between requests: each is a new connection, taken by either process.
    return httpx.post(f"{base}/api/activities/{activity}/draws", headers=headers, timeout=30)


def _player(base: str, name: str, run: Run) -> dict[str, str]:
    password = secrets.token_urlsafe(12)
    credentials = {"name": name, "password": password}
    assert httpx.post(f"{base}/api/auth/register", json=credentials).status_code == 201
    token = httpx.post(f"{base}/api/auth/login", json=credentials).json()["token"]
    run.secrets += [password, token]
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def database(postgres_url: str) -> Iterator[str]:
    """A database of the module's own on the test PostgreSQL server, as production runs."""
    name = f"raffle_{uuid.uuid4().hex[:16]}"
    asyncio.run(_execute_autocommit(postgres_url, CREATE_DATABASE["postgres"].format(name)))
    yield make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    asyncio.run(_execute_autocommit(postgres_url, DROP_DATABASE["postgres"].format(name)))


@pytest.fixture(scope="module")
def run(database: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Run:
    folder = tmp_path_factory.mktemp("observed")
    redis = redis_url.rsplit("/", 1)[0] + "/7"  # a database of its own, emptied first
    with Redis.from_url(redis) as client:
        client.flushdb()
    temporary = folder / "tmp"  # where `serve` makes its metrics folder
    temporary.mkdir()
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("RAFFLE_")},
        "RAFFLE_DATABASE_URL": database,
        "RAFFLE_REDIS_URL": redis,
        "RAFFLE_PORT": str(port),
        "RAFFLE_LOAD_DEMO": "false",
        "RAFFLE_LOG_FORMAT": "json",
        "RAFFLE_DELIVERY_ATTEMPTS": str(ATTEMPTS),
        "RAFFLE_DRAWS_PER_SECOND": "1000",
        "TMPDIR": str(temporary),
    }
    operator = secrets.token_urlsafe(12)
    for command in (["migrate"], ["user", "create", "ops", "--admin", "--password", operator]):
        done = subprocess.run([str(RAFFLE), *command], env=env, capture_output=True, check=False)
        assert done.returncode == 0, done.stderr
    stderr = folder / "stderr.log"
    with stderr.open("w") as log:
        server = subprocess.Popen(
            [str(RAFFLE), "serve", "--workers", "2"],
            env=env,
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        result = Run(f"http://127.0.0.1:{port}", stderr)
        try:
            wait_until_serving(result.base, server, seconds=240)  # two processes importing
            made = [p.name for p in temporary.iterdir()]
            assert [name[:15] for name in made] == ["raffle-metrics-"], made
            _script(result, operator, database)
        finally:
            server.terminate()
            server.wait(timeout=30)
    result.spare_folders = list(temporary.iterdir())
    return result


def _script(run: Run, operator: str, database: str) -> None:
    base = run.base
    login = httpx.post(f"{base}/api/auth/login", json={"name": "ops", "password": operator})
    admin = {"Authorization": f"Bearer {login.json()['token']}"}
    run.secrets += [operator, login.json()["token"]]
    loaded = httpx.post(
        f"{base}/api/admin/campaigns",
        headers={**admin, "Content-Type": "application/yaml", "Idempotency-Key": "load-1"},
        content=CAMPAIGN,
    )
    assert loaded.status_code == 200, loaded.text
    # An operator's mistake, by hand: the coupons' codes deleted.
    emptied = "DELETE FROM code_pool WHERE pool = 'ten-off' AND order_id IS NULL"
    asyncio.run(_execute_autocommit(database, emptied))
    # Both processes answer: pages are read until each has logged one.
    while len({line["pid"] for line in run.requests()}) < 2:
        assert run.pages < 500, "one process took every connection"
        assert httpx.get(f"{base}/api/activities/{POINTS}").status_code == 200
        run.pages += 1

    alice, bob = _player(base, "alice", run), _player(base, "bob", run)
    assert [_draw(base, POINTS, alice).status_code for _ in range(8)] == [201] * 5 + [409] * 3
    keyed = {**bob, "Idempotency-Key": "bob-1"}
    first, replay = _draw(base, POINTS, keyed), _draw(base, POINTS, keyed)
    assert replay.json()["order_id"] == first.json()["order_id"]
    assert _draw(base, POINTS, bob).status_code == 201
    run.traced = _draw(base, COUPONS, {**bob, "X-Request-ID": "trace-me.1"})
    assert [_draw(base, COUPONS, bob).status_code for _ in range(3)] == [201] * 3
    refused = [
        _draw(base, POINTS, {}),
        _draw(base, 739999, bob),
        _draw(base, "abc", bob),
        _draw(base, NOT_OPEN, bob),
    ]
    assert [r.status_code for r in refused] == [401, 404, 422, 409]
    failed = httpx.get(f"{base}/api/admin/deliveries/failed", headers=admin)
    assert failed.status_code == 200

    deadline = time.monotonic() + 60
    while True:  # delivery runs after the draws, in whichever process relayed each message
        run.metrics = _scrape(base)
        attempts = sum(v for (n, _), v in run.metrics.items() if n == "raffle_deliveries_total")
        if attempts >= 3 + 4 + 2 + 2 * ATTEMPTS and run.value("raffle_dead_letters_total") >= 2:
            break
        assert time.monotonic() < deadline, f"deliveries not done in 60 s: {run.metrics}"
        time.sleep(0.2)
    time.sleep(1)  # anything still counting would now show: the counts must be exact
    run.metrics = _scrape(base)


def test_both_processes_count_every_draw_refusal_and_delivery_exactly(run: Run) -> None:
    draws = {
        (POINTS, "win"): 3,  # alice's first three: the points' stock
        (POINTS, "lose"): 4,  # alice's next two and bob's two (his replay is no draw)
        (COUPONS, "win"): 2,  # the coupons' stock
        (COUPONS, "fallback"): 2,  # then the mug
    }
    for (activity, outcome), count in draws.items():
        assert run.value("raffle_draws_total", activity=activity, outcome=outcome) == count
    refusals = {
        "no_chances": 3,  # alice's 6th to 8th draw
        "not_authenticated": 1,
        "unknown_activity": 1,
        "invalid_input": 1,
        "activity_not_open": 1,
    }
    for reason, count in refusals.items():
        assert run.value("raffle_draw_refusals_total", reason=reason) == count
    assert run.value("raffle_draw_fast_refusals_total") == 2  # after the database's first
    answered = {201: 5 + 3 + 4, 409: 3 + 1, 401: 1, 404: 1, 422: 1}
    for status, count in answered.items():
        assert (
            run.value("raffle_http_requests_total", method="POST", route=DRAWS, status=status)
            == count
        )
    pages = run.value(
        "raffle_http_requests_total",
        method="GET",
        route="/api/activities/{activity_id}",
        status=200,
    )
    assert pages == run.pages  # counted by both processes, summed
    assert run.value(
        "raffle_http_request_duration_seconds_count", method="POST", route=DRAWS
    ) == sum(answered.values())

    deliveries = {
        ("points", "delivered"): 3,
        ("thanks", "delivered"): 4,
        ("physical", "delivered"): 2,
        ("coupon", "code_pool_empty"): 2 * ATTEMPTS,
    }
    for (kind, result), count in deliveries.items():
        assert run.value("raffle_deliveries_total", kind=kind, result=result) == count
    assert run.value("raffle_dead_letters_total") == 2
    # Every draw's message, and the operators' notice of each prize running out (two).
    assert run.value("raffle_relay_lag_seconds_count") == sum(draws.values()) + 2
    assert run.value("raffle_outbox_backlog") == 0
    assert run.value("raffle_outbox_oldest_age_seconds") == 0
    assert run.value("raffle_prize_stock_left", strategy=7301, award=2) == 0
    assert run.value("raffle_prize_stock_left", strategy=7302, award=3) == 0
    assert run.value("raffle_jobs_total", job="advance", result="ok") > 0
    assert not any(name == "raffle_jobs_total" and ("result", "failed") in labels
                   for name, labels in run.metrics)  # fmt: skip
    assert ("raffle_db_pool_connections", _labels({"pool": "db0", "state": "idle"})) in run.metrics
    assert run.spare_folders == [], "serve removes the metrics folder it made"


def test_each_request_has_a_json_line_with_its_id_echoed_and_none_answered_5xx(run: Run) -> None:
    lines = run.requests()
    assert len({line["pid"] for line in lines}) == 2
    for line in lines:
        assert {"method", "route", "status", "duration_ms", "request_id", "timestamp"} <= set(line)
    draws = [line for line in lines if line["route"] == DRAWS]
    assert len(draws) == 8 + 3 + 4 + 4  # alice's, bob's points, bob's coupons, the refused
    assert all(line["user_id"] == "bob" for line in draws if line["status"] == 404)
    assert run.traced is not None
    assert run.traced.headers["X-Request-ID"] == "trace-me.1"
    (traced,) = [line for line in lines if line["request_id"] == "trace-me.1"]
    assert (traced["route"], traced["status"], traced["user_id"]) == (DRAWS, 201, "bob")
    made = [line["request_id"] for line in lines if line["request_id"] != "trace-me.1"]
    assert all(len(str(rid)) == 32 for rid in made)
    assert len(set(made)) == len(made), "each request gets an id of its own"
    assert server_errors(run.log()) == []


def test_no_password_or_token_in_any_log_line(run: Run) -> None:
    log = run.log()
    assert len(run.secrets) == 6  # the operator's and two players', each with its token
    assert log.count("\n") > 30
    for secret in run.secrets:
        assert secret not in log
    assert "Bearer" not in log


def test_a_worker_serves_its_own_metrics_and_logs_its_job_runs(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("RAFFLE_")},
        "RAFFLE_DATABASE_URL": f"sqlite:///{tmp_path / 'raffle.db'}",
        "RAFFLE_WORKER_METRICS_PORT": str(port),
        "RAFFLE_LOG_FORMAT": "json",
        "RAFFLE_LOG_LEVEL": "debug",  # idle job runs too
    }
    migrated = subprocess.run([str(RAFFLE), "migrate"], env=env, capture_output=True, check=False)
    assert migrated.returncode == 0, migrated.stderr
    stderr = tmp_path / "worker.log"
    with stderr.open("w") as log:
        worker = subprocess.Popen([str(RAFFLE), "worker"], env=env, stderr=log)
        try:
            deadline = time.monotonic() + 240
            while True:
                try:
                    shown = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2).text
                    if 'raffle_jobs_total{job="advance",result="ok"}' in shown:
                        break
                except httpx.TransportError:
                    pass
                assert worker.poll() is None, stderr.read_text()
                assert time.monotonic() < deadline, "the worker served no job count in 240 s"
                time.sleep(0.5)
        finally:
            worker.terminate()
            worker.wait(timeout=30)
    jobs = [line for line in log_lines(stderr.read_text()) if line.get("event") == "job"]
    assert {"advance", "compensate", "sweep"} <= {line["job"] for line in jobs}
    assert all(isinstance(line["duration_ms"], float) for line in jobs)
