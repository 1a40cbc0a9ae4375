"""Claim terms: a won prize's window in the activity's zone, what its expiry job marks, and the
conditions a profile meets."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest

from raffle.domain.draws import Win
from raffle.domain.errors import InvalidConfig
from raffle.domain.prize_claims import (
    ClaimConditionUnmet,
    ClaimState,
    ClaimTerms,
    PrizeExpired,
    PrizeNotYetValid,
    Validity,
    ValidityKind,
    Window,
    check_claim,
    claim_state,
    terms_json,
    terms_of_json,
)
from raffle.domain.profiles import Profile
from raffle.service.prize_claims import Swept, expire_prizes
from tests.unit.usecase_world import ACTIVITY, PRIZE, STRATEGY, world

SHANGHAI = "Asia/Shanghai"  # UTC+8, no daylight saving
END = datetime(2027, 1, 1, tzinfo=UTC)
SEVEN_DAYS = Validity(ValidityKind.DAYS, days=7)
TICK = timedelta(microseconds=1)


def shanghai(year: int, month: int, day: int, *time: int) -> datetime:
    """A Shanghai wall-clock time as the UTC instant it is."""
    hour, minute, second = (*time, 0, 0, 0)[:3]
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC) - timedelta(hours=8)


def test_seven_days_from_a_win_just_before_midnight_end_as_day_8_begins_in_the_zone() -> None:
    won = shanghai(2026, 11, 10, 23, 59, 59)  # day 1 is the 10th, in Shanghai
    window = SEVEN_DAYS.window(won, END, SHANGHAI)
    assert window == Window(None, shanghai(2026, 11, 17))  # day 8 starts
    assert claim_state(None, window, shanghai(2026, 11, 17) - TICK) is ClaimState.OPEN
    assert claim_state(None, window, shanghai(2026, 11, 17)) is ClaimState.EXPIRED


def test_a_win_just_after_midnight_counts_from_the_next_day_though_utc_sees_one_day() -> None:
    before, after = shanghai(2026, 11, 10, 23, 59, 59), shanghai(2026, 11, 11, 0, 0, 1)
    assert before.date() == after.date()  # the same UTC day, the 10th
    closes = SEVEN_DAYS.window(after, END, SHANGHAI).closes
    assert closes == shanghai(2026, 11, 18)


def test_days_starting_later_open_on_their_first_day() -> None:
    validity = Validity(ValidityKind.DAYS, days=3, later=2)
    window = validity.window(shanghai(2026, 11, 10, 12), END, SHANGHAI)
    assert window == Window(shanghai(2026, 11, 12), shanghai(2026, 11, 15))
    assert claim_state(None, window, shanghai(2026, 11, 12) - TICK) is ClaimState.NOT_YET
    assert claim_state(None, window, shanghai(2026, 11, 12)) is ClaimState.OPEN


def test_fixed_days_run_from_the_first_days_start_to_the_last_days_end_in_the_zone() -> None:
    validity = Validity(ValidityKind.FIXED, first=date(2026, 12, 1), last=date(2026, 12, 31))
    window = validity.window(shanghai(2026, 11, 10), END, SHANGHAI)
    assert window == Window(shanghai(2026, 12, 1), shanghai(2027, 1, 1))


def test_with_the_activity_ends_when_it_ends() -> None:
    window = Validity(ValidityKind.ACTIVITY).window(shanghai(2026, 11, 10), END, SHANGHAI)
    assert window == Window(None, END)


@pytest.mark.parametrize(
    "validity",
    [
        SEVEN_DAYS,
        Validity(ValidityKind.DAYS, days=1, later=3),
        Validity(ValidityKind.FIXED, first=date(2026, 11, 12), last=date(2026, 11, 13)),
        Validity(ValidityKind.ACTIVITY),
    ],
)
def test_the_job_marks_exactly_the_wins_whose_window_has_closed(validity: Validity) -> None:
    end = shanghai(2026, 11, 20, 18)
    wins = [shanghai(2026, 11, 1) + timedelta(minutes=37 * n) for n in range(800)]
    for now in [shanghai(2026, 11, 9, 23, 59, 59), shanghai(2026, 11, 14), end, end + TICK]:
        before = validity.won_before(now, end, SHANGHAI)
        for won in (w for w in wins if w <= now):  # a win is never in the future
            closes = validity.window(won, end, SHANGHAI).closes
            expired = closes is not None and now >= closes
            assert (before is not None and won < before) == expired, (won, now)


def test_a_stored_claim_outlives_the_window() -> None:
    window = Window(None, shanghai(2026, 11, 17))
    later = shanghai(2026, 12, 1)
    assert claim_state(ClaimState.CLAIMED, window, later) is ClaimState.CLAIMED
    check_claim(ClaimTerms(SEVEN_DAYS, ("phone",)), ClaimState.CLAIMED, Profile("u"), window)


def test_a_claim_is_refused_when_expired_not_yet_valid_or_a_condition_is_missing() -> None:
    terms = ClaimTerms(SEVEN_DAYS, ("phone", "region", "attrs.vip"))
    window = Window(shanghai(2026, 11, 12), shanghai(2026, 11, 17))
    with pytest.raises(PrizeExpired):
        check_claim(terms, ClaimState.EXPIRED, Profile("u", phone="+8613800138000"), window)
    with pytest.raises(PrizeNotYetValid):
        check_claim(terms, ClaimState.NOT_YET, Profile("u"), window)
    with pytest.raises(ClaimConditionUnmet) as refused:
        check_claim(terms, ClaimState.OPEN, Profile("u", region="上海"), window)
    assert refused.value.missing == ["phone", "attrs.vip"]
    met = Profile("u", phone="+8613800138000", region="上海", attributes={"vip": False})
    check_claim(terms, ClaimState.OPEN, met, window)  # present, whatever its value


@pytest.mark.parametrize(
    "make",
    [
        lambda: Validity(ValidityKind.DAYS),
        lambda: Validity(ValidityKind.DAYS, days=0),
        lambda: Validity(ValidityKind.FIXED, first=date(2026, 12, 2), last=date(2026, 12, 1)),
        lambda: Validity(ValidityKind.FIXED, first=date(2026, 12, 2)),
        lambda: Validity(ValidityKind.ACTIVITY, days=3),
        lambda: Validity(ValidityKind.ACTIVITY, later=1),
        lambda: ClaimTerms(conditions=("password",)),
        lambda: ClaimTerms(conditions=("phone", "phone")),
        lambda: ClaimTerms(conditions=("attrs.Bad-Name",)),
    ],
)
def test_terms_that_cannot_hold_are_refused(make: object) -> None:
    with pytest.raises(InvalidConfig):
        make()  # type: ignore[operator]


@pytest.mark.parametrize(
    "terms",
    [
        ClaimTerms(),
        ClaimTerms(SEVEN_DAYS),
        ClaimTerms(Validity(ValidityKind.DAYS, days=30, later=1), ("phone", "attrs.member")),
        ClaimTerms(Validity(ValidityKind.FIXED, first=date(2026, 1, 1), last=date(2026, 2, 1))),
        ClaimTerms(conditions=("sn",)),
    ],
)
def test_terms_read_back_from_json_unchanged(terms: ClaimTerms) -> None:
    assert terms_of_json(terms_json(terms)) == terms


def test_json_of_an_unknown_kind_is_refused_at_its_field() -> None:
    with pytest.raises(InvalidConfig) as refused:
        terms_of_json({"validity": {"kind": "forever"}})
    assert refused.value.path == ("validity", "kind")


# --- the expiry job on fakes ------------------------------------------------------------


async def test_the_job_reads_each_win_once_yet_catches_a_draw_committed_after_a_run() -> None:
    w = world()
    strategy = w.config.strategies[STRATEGY]
    (prize,) = strategy.prizes
    claim = ClaimTerms(Validity(ValidityKind.ACTIVITY))
    w.config.strategies[STRATEGY] = replace(strategy, prizes=(replace(prize, claim=claim),))
    end = w.config.activities[ACTIVITY].end_at
    swept: Swept = {}

    async def wins(*names: str, at: datetime) -> None:
        async with w.shards.for_user("any") as uow:
            for name in names:
                await uow.wins.add(Win(name, name, ACTIVITY, STRATEGY, PRIZE, None, "default", at))
            await uow.commit()

    async def run(now: datetime) -> int:
        w.clock.current = now
        return await expire_prizes(
            config=w.uow, catalogue=w.catalogue, shards=w.shards, clock=w.clock, swept=swept
        )

    await wins("o1", "o2", at=end - timedelta(days=3))
    assert await run(end - TICK) == 0
    assert await run(end) == 2
    await wins("o3", at=end - timedelta(seconds=1))  # a draw in flight at the end commits late
    assert await run(end + timedelta(minutes=1)) == 1
    assert await run(end + timedelta(minutes=2)) == 0
    assert set(w.shards.store.prize_claims) == {"o1", "o2", "o3"}
