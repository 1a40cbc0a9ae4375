"""The payment jobs' schedule: the reconciliation soon after a worker starts, then daily."""

from __future__ import annotations

from raffle.entrypoints.payment_worker import (
    RECONCILE_EVERY_SECONDS,
    RECONCILE_FIRST_SECONDS,
    Daily,
)


def test_the_reconciliation_runs_soon_after_a_start_then_once_a_day() -> None:
    started = 1000.0
    daily = Daily(started + RECONCILE_FIRST_SECONDS)
    assert RECONCILE_FIRST_SECONDS < RECONCILE_EVERY_SECONDS
    assert not daily.due(started)
    assert not daily.due(started + RECONCILE_FIRST_SECONDS - 1)
    first = started + RECONCILE_FIRST_SECONDS + 0.5  # the tick after it was due
    assert daily.due(first)
    assert not daily.due(first + 1)  # once, not on every tick after
    assert not daily.due(first + RECONCILE_EVERY_SECONDS - 1)
    assert daily.due(first + RECONCILE_EVERY_SECONDS)
    assert not daily.due(first + RECONCILE_EVERY_SECONDS + 1)
