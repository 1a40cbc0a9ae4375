from dataclasses import replace
from datetime import UTC, datetime

import pytest

from raffle.domain.activity import (
    ActivityKind,
    ActivityState,
    IllegalTransition,
    QueuedAndScheduled,
    UnknownAction,
)
from raffle.domain.campaign import Campaign
from raffle.domain.caps import NO_CAPS, Caps
from raffle.domain.errors import InvalidConfig
from raffle.domain.scheduled import scheduled
from raffle.service.activities import advance, change_state, published_odds
from raffle.service.campaigns import FrozenOdds, load_campaign
from tests.unit.usecase_world import ACTIVITY, PRIZE, STRATEGY, world

S = ActivityState


async def test_the_review_workflow_runs_edit_to_closed_and_reopens() -> None:
    w = world()
    w.set_state(S.EDIT)
    for action, state in [("submit", S.SUBMITTED), ("refuse", S.REFUSED), ("edit", S.EDIT),
                          ("submit", S.SUBMITTED), ("approve", S.APPROVED), ("start", S.RUNNING),
                          ("close", S.CLOSED), ("reopen", S.RUNNING)]:  # fmt: skip
        assert (await change_state(ACTIVITY, action, w.uow(), now=w.clock.now())).state is state
        assert w.config.activities[ACTIVITY].state is state


@pytest.mark.parametrize(
    ("state", "action"), [(S.EDIT, "approve"), (S.RUNNING, "submit"), (S.CLOSED, "close")]
)
async def test_an_illegal_transition_names_the_current_state_and_changes_nothing(
    state: ActivityState, action: str
) -> None:
    w = world()
    w.set_state(state)
    with pytest.raises(IllegalTransition) as error:
        await change_state(ACTIVITY, action, w.uow(), now=w.clock.now())
    assert error.value.current is state
    assert w.config.activities[ACTIVITY].state is state


async def test_an_unknown_action_is_refused() -> None:
    w = world()
    with pytest.raises(UnknownAction):
        await change_state(ACTIVITY, "explode", w.uow(), now=w.clock.now())


async def test_the_scheduler_starts_and_closes_on_time() -> None:
    w = world()
    w.set_state(S.APPROVED)
    assert await advance(w.uow, datetime(2025, 12, 31, tzinfo=UTC)) == []
    assert await advance(w.uow, datetime(2026, 1, 1, tzinfo=UTC)) == [(ACTIVITY, "start")]
    assert w.config.activities[ACTIVITY].state is S.RUNNING
    assert await advance(w.uow, datetime(2026, 6, 1, tzinfo=UTC)) == []
    assert await advance(w.uow, datetime(2027, 1, 1, tzinfo=UTC)) == [(ACTIVITY, "close")]
    assert w.config.activities[ACTIVITY].state is S.CLOSED


async def test_the_odds_of_a_running_activity_are_frozen() -> None:
    w = world(rate="0.5", stock=5)
    strategy = w.config.strategies[STRATEGY]
    awards = tuple(w.config.awards.values())
    unchanged = Campaign(awards, (strategy,))
    await load_campaign(unchanged, w.uow())  # the same odds again: fine
    changed = Campaign(awards, (strategy.__class__(STRATEGY, (), strategy.fallback),))
    with pytest.raises(FrozenOdds):
        await load_campaign(changed, w.uow())
    assert w.config.strategies[STRATEGY] == strategy
    w.set_state(S.EDIT)
    await load_campaign(changed, w.uow())
    assert w.config.strategies[STRATEGY].prizes == ()


async def test_published_odds_show_rates_stock_and_locks() -> None:
    w = world(rate="0.0001", stock=5, prize_rules=(("lock", "3"),))
    odds = await published_odds(ACTIVITY, catalogue=w.catalogue, stock=w.stock)
    [prize] = odds.prizes
    assert (prize.award_id, prize.rate, prize.stock, prize.stock_left, prize.lock_after) == (
        PRIZE,
        "0.0001",
        5,
        5,
        3,
    )
    assert odds.fallback_rate == "0.9999"


def test_a_draws_day_and_month_are_those_of_the_activitys_zone() -> None:
    activity = world().config.activities[ACTIVITY]  # Asia/Shanghai, UTC+8
    for now, expected in [
        (datetime(2026, 1, 31, 15, 59, 59, 900_000, tzinfo=UTC), ("2026-01-31", "2026-01")),
        (datetime(2026, 1, 31, 16, 0, 0, 100_000, tzinfo=UTC), ("2026-02-01", "2026-02")),
    ]:
        assert activity.periods(now) == expected
        assert (activity.day(now), activity.month(now)) == expected


@pytest.mark.parametrize("zone", ["Asia/Shanghai", "America/New_York", "Asia/Kathmandu", "UTC"])
def test_kept_periods_are_those_converted_afresh_around_midnights_and_clock_changes(
    zone: str,
) -> None:
    """periods() keeps the last second it converted: any time, in any order, in the same
    second or the next, around a midnight or a daylight-saving change, reads as converted."""
    import random
    from datetime import timedelta
    from zoneinfo import ZoneInfo

    activity = replace(world().config.activities[ACTIVITY], time_zone=zone)
    local = ZoneInfo(zone)
    edges = [
        datetime(2026, 3, 8, 0, tzinfo=local), datetime(2026, 3, 8, 3, tzinfo=local),
        datetime(2026, 11, 1, 0, tzinfo=local), datetime(2026, 11, 1, 1, 59, tzinfo=local),
        datetime(2026, 11, 2, 0, tzinfo=local), datetime(2026, 12, 31, 23, 59, 59, tzinfo=local),
    ]  # fmt: skip
    chosen = random.Random(12)
    times = [
        (edge + timedelta(microseconds=chosen.randint(-2_000_000, 2_000_000))).astimezone(UTC)
        for edge in edges
        for _ in range(200)
    ]
    for now in [*sorted(times), *times]:
        day = now.astimezone(local).date().isoformat()
        assert activity.periods(now) == (day, day[:7]), now
        assert activity.periods(now.astimezone(local)) == (day, day[:7]), now


async def test_the_caps_of_a_running_activity_are_frozen_with_its_odds() -> None:
    w = world()
    running = w.config.activities[ACTIVITY]
    awards, strategy = tuple(w.config.awards.values()), w.config.strategies[STRATEGY]
    packs = tuple(w.config.packs.values())
    capped = Campaign(awards, (strategy,), packs, (replace(running, caps=Caps(winners=10)),))
    with pytest.raises(FrozenOdds, match="caps are fixed"):
        await load_campaign(capped, w.uow())
    assert w.config.activities[ACTIVITY].caps == NO_CAPS
    w.set_state(S.EDIT)
    await load_campaign(capped, w.uow())
    assert w.config.activities[ACTIVITY].caps == Caps(winners=10)


@pytest.mark.parametrize("limit", [0, -3])
def test_a_cap_below_one_is_refused_with_its_field(limit: int) -> None:
    with pytest.raises(InvalidConfig) as error:
        Caps(participants=limit)
    assert error.value.path == ("join_people_total_limit",)


async def test_the_schedule_of_a_running_activity_is_frozen() -> None:
    w = world()
    running = w.config.activities[ACTIVITY]
    awards, strategy = tuple(w.config.awards.values()), w.config.strategies[STRATEGY]
    packs = tuple(w.config.packs.values())
    at = running.begin_at + (running.end_at - running.begin_at) / 2
    timed = replace(running, schedule=scheduled(at, 5))
    with pytest.raises(FrozenOdds, match="schedule is fixed"):
        await load_campaign(Campaign(awards, (strategy,), packs, (timed,)), w.uow())
    assert w.config.activities[ACTIVITY].schedule is None
    w.set_state(S.EDIT)
    await load_campaign(Campaign(awards, (strategy,), packs, (timed,)), w.uow())
    assert w.config.activities[ACTIVITY].kind is ActivityKind.SCHEDULED


def test_an_activity_is_queued_or_scheduled_never_both() -> None:
    instant = world().config.activities[ACTIVITY]
    at = instant.begin_at + (instant.end_at - instant.begin_at) / 2
    assert replace(instant, queued=True).queued
    assert replace(instant, schedule=scheduled(at, 5)).kind is ActivityKind.SCHEDULED
    with pytest.raises(QueuedAndScheduled) as error:
        replace(instant, queued=True, schedule=scheduled(at, 5))
    assert error.value.code == "queued_and_scheduled"
    assert error.value.path == ("queued",)
    assert isinstance(error.value, InvalidConfig)  # reported as any invalid field
