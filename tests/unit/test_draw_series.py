"""Draws per minute: one point per minute of the window, the current minute last."""

from __future__ import annotations

from datetime import timedelta

import pytest

from raffle.domain.draws import UnknownActivity
from raffle.domain.users import InvalidInput
from raffle.service.draw_series import draws_over_time
from tests.unit.usecase_world import ACTIVITY, world


async def test_each_minute_of_the_window_counts_its_draws_and_quiet_minutes_count_zero() -> None:
    w = world()
    start = w.clock.now()  # 12:00:00
    await w.draw("alice")
    w.clock.advance(59.9)
    await w.draw("bob")  # still 12:00
    w.clock.advance(120)  # 12:02:59.9
    await w.draw("carol")
    w.clock.advance(0.2)  # 12:03:00.1: the current minute, no draw yet
    series = await draws_over_time(
        ACTIVITY, 5, now=w.clock.now(), catalogue=w.catalogue, shards=w.shards
    )
    minutes = [start + timedelta(minutes=m) for m in range(-1, 4)]
    assert series == list(zip(minutes, [0, 2, 0, 1, 0], strict=True))


async def test_draws_before_the_window_are_left_out() -> None:
    w = world()
    await w.draw("alice")
    w.clock.advance(3600)
    series = await draws_over_time(
        ACTIVITY, 60, now=w.clock.now(), catalogue=w.catalogue, shards=w.shards
    )
    assert len(series) == 60
    assert sum(n for _, n in series) == 0


async def test_an_unknown_activity_or_a_window_out_of_range_is_refused() -> None:
    w = world()
    with pytest.raises(UnknownActivity):
        await draws_over_time(999, 5, now=w.clock.now(), catalogue=w.catalogue, shards=w.shards)
    for minutes in (0, 24 * 60 + 1):
        with pytest.raises(InvalidInput):
            await draws_over_time(
                ACTIVITY, minutes, now=w.clock.now(), catalogue=w.catalogue, shards=w.shards
            )
