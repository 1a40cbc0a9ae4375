"""What the use cases count (through the Metrics port) and the Prometheus adapter shows."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from raffle.adapters.metrics import (
    MULTIPROCESS,
    SHARED_MEMORY,
    PrometheusMetrics,
    shared_between,
)
from raffle.domain.awards import Award, AwardKind
from raffle.domain.draws import OutboxMessage
from raffle.domain.quota import NoChances, QuotaPack
from raffle.service.deliverers import DeliveryContext
from raffle.service.delivery import deliver_together, won_message
from raffle.service.gauges import measure
from tests.unit.usecase_world import ACTIVITY, PRIZE, STRATEGY, world


async def test_draws_count_by_outcome_replays_do_not_and_fast_refusals_do() -> None:
    w = world(rate="1", stock=2, welcome=QuotaPack(21, 4, 4, 4))
    for _ in range(3):
        await w.draw()
    await w.draw(key="k")
    replay = await w.draw(key="k")
    assert replay.replayed
    for _ in range(3):
        with pytest.raises(NoChances):
            await w.draw()
    assert w.metrics.counts == {
        ("drawn", ACTIVITY, "win"): 2,  # the stock
        ("drawn", ACTIVITY, "lose"): 2,  # then "thanks for playing"
        ("refused_fast",): 2,  # after the database's own first refusal
    }


async def test_each_delivery_attempt_counts_by_kind_and_result() -> None:
    w = world(rate="1")
    w.config.awards[PRIZE] = Award(PRIZE, AwardKind.POINTS, "points", "5")
    won = [await w.draw() for _ in range(2)]
    messages = [won_message(w.shards.store.wins[r.order_id], w.clock.now()) for r in won]
    malformed = OutboxMessage("f" * 32, "award.won", "x", "{}", w.clock.now())
    ctx = DeliveryContext(w.catalogue, w.uow, w.shards, w.clock, w.hints, w.metrics)
    await deliver_together([*messages, malformed], ctx)
    await deliver_together(messages[:1], ctx)  # delivered before: harmless, one attempt more
    assert {k: n for k, n in w.metrics.counts.items() if k[0] == "delivered"} == {
        ("delivered", "points", "delivered"): 3,
        ("delivered", "unknown", "not_deliverable"): 1,
    }


async def test_levels_are_the_outbox_backlog_and_the_stock_left() -> None:
    w = world(rate="1", stock=5)
    await w.draw()
    w.clock.advance(30)
    await w.draw()
    await measure(
        config=w.uow,
        catalogue=w.catalogue,
        shards=w.shards,
        stock=w.stock,
        metrics=w.metrics,
        now=w.clock.now(),
    )
    # The fake outbox publishes nothing: both messages wait, the first for 30 s.
    assert w.metrics.levels == {("backlog",): 2, ("oldest",): 30.0, ("stock", STRATEGY, PRIZE): 3}


def _samples(metrics: PrometheusMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = metrics.render().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_the_adapter_shows_each_count_and_level_with_bounded_labels() -> None:
    metrics = PrometheusMetrics()
    metrics.answered("POST", "/api/activities/{activity_id}/draws", 201, 0.02)
    metrics.answered("BREW", "/x", 405, 0.001)  # a method of no one's: "other"
    metrics.drawn(7, "win")
    metrics.refused("no_chances")
    metrics.refused_fast()
    metrics.delivered("coupon", "code_pool_empty")
    metrics.dead_lettered()
    metrics.published(0.3)
    metrics.job_ran("advance", failed=True)
    metrics.outbox(4, 12.5)
    metrics.stock_left(10, 2, 99)
    seen = _samples(metrics)
    draws = "/api/activities/{activity_id}/draws"
    expected = {
        ("raffle_http_requests_total", (("method", "POST"), ("route", draws), ("status", "201"))),
        ("raffle_http_requests_total", (("method", "other"), ("route", "/x"), ("status", "405"))),
        ("raffle_draws_total", (("activity", "7"), ("outcome", "win"))),
        ("raffle_draw_refusals_total", (("reason", "no_chances"),)),
        ("raffle_draw_fast_refusals_total", ()),
        ("raffle_deliveries_total", (("kind", "coupon"), ("result", "code_pool_empty"))),
        ("raffle_dead_letters_total", ()),
        ("raffle_relay_lag_seconds_count", ()),
        ("raffle_jobs_total", (("job", "advance"), ("result", "failed"))),
    }  # fmt: skip
    assert {key: seen[key] for key in expected} == dict.fromkeys(expected, 1.0)
    assert (
        seen["raffle_http_request_duration_seconds_sum", (("method", "POST"), ("route", draws))]
        == 0.02
    )
    assert seen["raffle_outbox_backlog", ()] == 4
    assert seen["raffle_outbox_oldest_age_seconds", ()] == 12.5
    assert seen["raffle_prize_stock_left", (("award", "2"), ("strategy", "10"))] == 99


def test_several_processes_share_a_folder_of_their_own_removed_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(MULTIPROCESS, raising=False)
    with shared_between(1):
        assert MULTIPROCESS not in os.environ  # one process: its metrics in its memory
    with shared_between(2):
        folder = Path(os.environ[MULTIPROCESS])
        assert folder.is_dir()
    assert MULTIPROCESS not in os.environ
    assert not folder.exists()


def test_the_shared_folder_is_in_memory_unless_tmpdir_names_a_place(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("TMPDIR", raising=False)
    with shared_between(2):
        assert Path(os.environ[MULTIPROCESS]).parent == Path(SHARED_MEMORY)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again, as a new process does
    with shared_between(2):
        assert Path(os.environ[MULTIPROCESS]).parent == tmp_path
