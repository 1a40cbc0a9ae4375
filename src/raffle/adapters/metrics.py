"""Metrics in Prometheus' text format with prometheus-client, shared by a host's processes."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Mapping

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    start_http_server,
)
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import QueuePool

MEDIA_TYPE = CONTENT_TYPE_LATEST
# prometheus-client's own switch, read by it when it is imported: each process then writes
# its values to files there, and a scrape of any one of them reads them all.
MULTIPROCESS = "PROMETHEUS_MULTIPROC_DIR"
SHARED_MEMORY = "/dev/shm"  # noqa: S108  # tmpfs on Linux; the folder in it is mkdtemp's, private
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
RELAY_LAG_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)


class PrometheusMetrics:
    """The Metrics port. Label values are bounded: routes are templates, methods a known
    set, activities, prizes and kinds come from the configuration, reasons are codes."""

    def __init__(self) -> None:
        self._answers: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}
        self._drawn: dict[tuple[int, str], Counter] = {}
        self._refused: dict[str, Counter] = {}
        # A registry per instance, not the global one: tests wire many applications.
        self.registry = registry = CollectorRegistry(auto_describe=True)
        self._requests = Counter(
            "raffle_http_requests",
            "HTTP requests answered, by route template and status.",
            ["method", "route", "status"],
            registry=registry,
        )
        self._latency = Histogram(
            "raffle_http_request_duration_seconds",
            "Time from a request's arrival to the end of its answer.",
            ["method", "route"],
            registry=registry,
        )
        self._draws = Counter(
            "raffle_draws",
            "Draws committed (replays excluded), by outcome: win, fallback or lose.",
            ["activity", "outcome"],
            registry=registry,
        )
        self._refusals = Counter(
            "raffle_draw_refusals",
            "Draws refused, by the problem's stable code.",
            ["reason"],
            registry=registry,
        )
        self._fast_refusals = Counter(
            "raffle_draw_fast_refusals",
            "Draws refused from the chance hints without a transaction (also in refusals).",
            registry=registry,
        )
        self._deliveries = Counter(
            "raffle_deliveries",
            "Delivery attempts, by award kind and result: delivered, or the failure's code.",
            ["kind", "result"],
            registry=registry,
        )
        self._dead_letters = Counter(
            "raffle_dead_letters",
            "Messages that reached the dead-letter queue: deliveries failed for good.",
            registry=registry,
        )
        self._relay_lag = Histogram(
            "raffle_relay_lag_seconds",
            "Time from a message's transaction to its publication by the relay.",
            buckets=RELAY_LAG_BUCKETS,
            registry=registry,
        )
        self._jobs = Counter(
            "raffle_jobs",
            "Scheduled job runs, by job and result (ok, failed).",
            ["job", "result"],
            registry=registry,
        )
        # Levels measured by any one process for all: the last one measured is the truth.
        self._backlog = Gauge(
            "raffle_outbox_backlog",
            "Outbox messages not yet published, over every shard.",
            multiprocess_mode="mostrecent",
            registry=registry,
        )
        self._oldest = Gauge(
            "raffle_outbox_oldest_age_seconds",
            "Age of the oldest outbox message not yet published (0: none).",
            multiprocess_mode="mostrecent",
            registry=registry,
        )
        self._stock = Gauge(
            "raffle_prize_stock_left",
            "Units left of each stocked prize of the running activities.",
            ["strategy", "award"],
            multiprocess_mode="mostrecent",
            registry=registry,
        )
        # A level of each process: summed over the live ones.
        self._pools = Gauge(
            "raffle_db_pool_connections",
            "Database connections of the pools, lent out (in_use) or kept idle.",
            ["pool", "state"],
            multiprocess_mode="livesum",
            registry=registry,
        )

    def answered(self, method: str, route: str, status: int, seconds: float) -> None:
        # Every request: each labelled child found once (labels() checks and converts its
        # values on each call), then only its value written.
        if (children := self._answers.get((method, route, status))) is None:
            label = method if method in METHODS else "other"
            children = self._answers[method, route, status] = (
                self._requests.labels(label, route, status),
                self._latency.labels(label, route),
            )
        children[0].inc()
        children[1].observe(seconds)

    def drawn(self, activity_id: int, outcome: str) -> None:
        if (child := self._drawn.get((activity_id, outcome))) is None:
            child = self._drawn[activity_id, outcome] = self._draws.labels(activity_id, outcome)
        child.inc()

    def refused(self, reason: str) -> None:
        if (child := self._refused.get(reason)) is None:
            child = self._refused[reason] = self._refusals.labels(reason)
        child.inc()

    def refused_fast(self) -> None:
        self._fast_refusals.inc()

    def delivered(self, kind: str, result: str) -> None:
        self._deliveries.labels(kind, result).inc()

    def dead_lettered(self) -> None:
        self._dead_letters.inc()

    def published(self, lag_seconds: float) -> None:
        self._relay_lag.observe(max(lag_seconds, 0.0))

    def job_ran(self, job: str, failed: bool) -> None:
        self._jobs.labels(job, "failed" if failed else "ok").inc()

    def outbox(self, backlog: int, oldest_seconds: float) -> None:
        self._backlog.set(backlog)
        self._oldest.set(oldest_seconds)

    def stock_left(self, strategy_id: int, award_id: int, left: int) -> None:
        self._stock.labels(strategy_id, award_id).set(left)

    def measure_pools(self, engines: Mapping[str, AsyncEngine]) -> None:
        """The connections of this process's pools by name, lent out and kept idle."""
        for name, engine in engines.items():
            pool = engine.pool
            if isinstance(pool, QueuePool):  # not a NullPool: nothing kept to count
                self._pools.labels(name, "in_use").set(pool.checkedout())
                self._pools.labels(name, "idle").set(pool.checkedin())

    def serve(self, host: str, port: int) -> None:
        """Answer scrapes of this process's metrics on `host`:`port`, from a thread (for a
        process with no HTTP server of its own: `raffle worker`)."""
        start_http_server(port, addr=host, registry=self.registry)

    def render(self) -> bytes:
        """Every metric in the text format: of every process sharing the folder, if any."""
        if MULTIPROCESS not in os.environ:
            return generate_latest(self.registry)
        shared = CollectorRegistry()
        MultiProcessCollector(shared)  # type: ignore[no-untyped-call]  # not annotated
        return generate_latest(shared)


@contextlib.contextmanager
def shared_between(processes: int) -> Iterator[None]:
    """Around starting `processes` server processes (spawned, so they import prometheus-client
    afresh): with more than one, each keeps its metrics in files of a temporary folder that
    a scrape of any of them reads, removed once they have stopped."""
    if processes == 1:
        yield
        return
    # In memory where the host has it (unless TMPDIR names a place): every count written is a
    # write to a mapped file, which on a disk the kernel keeps writing back while requests
    # wait on its pages.
    memory = os.path.isdir(SHARED_MEMORY) and "TMPDIR" not in os.environ
    parent = SHARED_MEMORY if memory else None
    with tempfile.TemporaryDirectory(prefix="raffle-metrics-", dir=parent) as folder:
        os.environ[MULTIPROCESS] = folder
        try:
            yield
        finally:
            del os.environ[MULTIPROCESS]


def forget_process(pid: int) -> None:
    """Drop a process's per-process levels (the pools) from the shared folder once it ends."""
    if MULTIPROCESS in os.environ:
        mark_process_dead(pid)  # type: ignore[no-untyped-call]  # not annotated
