"""Behaviour rebates and sign-in on fakes: once per business key, the streak, the calendar."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from raffle.adapters.sign_in_calendar import DatabaseSignInCalendar
from raffle.domain.activity import ActivityState
from raffle.domain.draws import ActivityNotOpen
from raffle.domain.errors import InvalidConfig
from raffle.domain.rebates import (
    SIGN_IN,
    InvalidBehaviour,
    NoRebateRule,
    RebateRule,
    streak,
)
from raffle.service.rebates import (
    Behaviour,
    RebateResult,
    SignIn,
    SignIns,
    rebate,
    sign_in,
    sign_ins,
    signed_days,
)
from tests.unit.usecase_world import ACTIVITY, SKU, World, world


def rebating(**rules: tuple[int | None, int | None]) -> World:
    w = world()
    for behaviour, (sku, points) in rules.items():
        w.config.rebate_rules[ACTIVITY, behaviour] = RebateRule(ACTIVITY, behaviour, sku, points)
    return w


def calendar(w: World) -> DatabaseSignInCalendar:
    async def load(user_id: str, activity_id: int, month: date) -> frozenset[int]:
        return await signed_days(w.shards, user_id, activity_id, month)

    return DatabaseSignInCalendar(load)


async def _sign_in(w: World, user: str = "alice") -> SignIn:
    return await sign_in(
        user, ACTIVITY, catalogue=w.catalogue, config=w.uow, shards=w.shards,
        clock=w.clock, calendar=calendar(w), hints=w.hints,
    )  # fmt: skip


async def _calendar(w: World, month: str | None = None) -> SignIns:
    return await sign_ins(
        "alice", ACTIVITY, month, catalogue=w.catalogue, clock=w.clock, calendar=calendar(w)
    )


async def _report(w: World, behaviour: str, key: str) -> RebateResult:
    return await rebate(
        Behaviour("alice", ACTIVITY, behaviour, key),
        catalogue=w.catalogue, config=w.uow, shards=w.shards, clock=w.clock, hints=w.hints,
    )  # fmt: skip


def test_a_rule_grants_something_under_a_plain_name() -> None:
    with pytest.raises(InvalidConfig, match="sku, points or both"):
        RebateRule(ACTIVITY, "share")
    with pytest.raises(InvalidConfig, match="behaviour"):
        RebateRule(ACTIVITY, "Share It!", points=1)
    with pytest.raises(InvalidConfig, match="positive"):
        RebateRule(ACTIVITY, "share", points=0)


def test_the_streak_counts_back_from_today_or_yesterday() -> None:
    days = frozenset(date(2026, 11, d) for d in (1, 2, 4, 5, 6))
    assert streak(days, date(2026, 11, 6)) == 3
    assert streak(days, date(2026, 11, 7)) == 3  # not signed yet today: still running
    assert streak(days, date(2026, 11, 8)) == 0  # a whole day missed
    assert streak(days, date(2026, 11, 3)) == 2


async def test_signing_in_twice_a_day_rebates_once() -> None:
    w = rebating(sign_in=(SKU, 10))
    first = await _sign_in(w)
    again = await _sign_in(w)
    assert (first.granted, again.granted) == (True, False)
    assert again.order == first.order
    assert first.day == date(2026, 11, 21)  # 12:00 UTC is 20:00 in Shanghai
    assert w.shards.store.points["alice"].available == 10
    assert len(w.shards.store.top_ups) == 1
    assert w.shards.store.accounts["alice", ACTIVITY][0] == 10 + 5  # welcome pack + pack 22
    assert w.config.sku_left[SKU] == 99  # the repeat gave its unit back


async def test_the_day_rolls_over_in_the_activitys_time_zone() -> None:
    w = rebating(sign_in=(None, 10))
    w.clock.current = datetime(2026, 11, 21, 15, 59, 59, 900000, tzinfo=UTC)  # 23:59:59.9 +08
    first = await _sign_in(w)
    w.clock.current = datetime(2026, 11, 21, 16, 0, 0, 100000, tzinfo=UTC)  # 00:00:00.1 +08
    second = await _sign_in(w)
    assert (first.granted, second.granted) == (True, True)
    assert (first.day, second.day) == (date(2026, 11, 21), date(2026, 11, 22))
    assert second.streak == 2
    assert w.shards.store.points["alice"].available == 20


async def test_the_calendar_shows_the_months_days_and_the_streak_across_months() -> None:
    w = rebating(sign_in=(None, 1))
    for day in (27, 29, 30, 31):
        w.clock.current = datetime(2026, 10, day, 4, tzinfo=UTC)
        await _sign_in(w)
    w.clock.current = datetime(2026, 11, 1, 4, tzinfo=UTC)
    await _sign_in(w)
    november = await _calendar(w)
    assert (november.days, november.signed_today, november.streak) == ([1], True, 4)
    october = await _calendar(w, "2026-10")
    assert october.days == [27, 29, 30, 31]
    w.clock.current = datetime(2026, 11, 3, 4, tzinfo=UTC)
    assert (await _calendar(w)).streak == 0


async def test_a_reported_behaviour_is_rebated_once_per_business_key() -> None:
    w = rebating(share=(None, 5))
    assert (await _report(w, "share", "post-1")).granted
    assert not (await _report(w, "share", "post-1")).granted
    assert (await _report(w, "share", "post-2")).granted
    assert w.shards.store.points["alice"].available == 10
    assert {o.out_business_no for o in w.shards.store.points_orders.values()} == {
        r.business_no for r in w.shards.store.rebates.values()
    }


async def test_a_behaviour_without_an_enabled_rule_grants_nothing() -> None:
    w = rebating(share=(None, 5))
    with pytest.raises(NoRebateRule):
        await _report(w, "comment", "c-1")
    w.config.rebate_rules[ACTIVITY, "share"] = RebateRule(
        ACTIVITY, "share", points=5, enabled=False
    )
    with pytest.raises(NoRebateRule):
        await _report(w, "share", "post-1")
    with pytest.raises(InvalidBehaviour):
        await _report(w, "share", "")
    assert w.shards.store.rebates == {}


async def test_a_closed_activity_rebates_nothing() -> None:
    w = rebating(sign_in=(None, 5))
    w.set_state(ActivityState.CLOSED)
    with pytest.raises(ActivityNotOpen):
        await _sign_in(w)
    assert w.shards.store.rebates == {}


async def test_sign_in_is_the_built_in_behaviour() -> None:
    w = rebating(sign_in=(None, 3))
    done = await _sign_in(w)
    assert (done.order.behaviour, done.order.business_key) == (SIGN_IN, "2026-11-21")


async def test_operators_cannot_report_the_built_in_sign_in() -> None:
    w = rebating(sign_in=(None, 3))
    with pytest.raises(InvalidBehaviour, match="signing in"):
        await _report(w, SIGN_IN, "2026-11-21")
    assert w.shards.store.rebates == {}


async def test_months_outside_the_activity_are_empty_without_asking_the_calendar() -> None:
    w = rebating(sign_in=(None, 3))
    await _sign_in(w)
    asked: list[date] = []

    async def load(user_id: str, activity_id: int, month: date) -> frozenset[int]:
        asked.append(month)
        return await signed_days(w.shards, user_id, activity_id, month)

    found = await sign_ins(
        "alice", ACTIVITY, "2031-05", catalogue=w.catalogue, clock=w.clock,
        calendar=DatabaseSignInCalendar(load),
    )  # fmt: skip
    assert (found.days, found.signed_today, found.streak) == ([], True, 1)
    assert asked == [date(2026, 11, 1)]  # this month only, read once
