"""Participation policies and per-person caps: periods, admission, caps (domain, no I/O)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from raffle.domain.errors import InvalidConfig
from raffle.domain.policies import (
    INSUFFICIENT_POINTS,
    JOIN_LIMIT_REACHED,
    LEVEL_REQUIRED,
    NOT_IN_AUDIENCE,
    WIN_LIMIT_REACHED,
    Entry,
    Limit,
    NotAdmitted,
    Participation,
    Period,
    PersonCaps,
    Policy,
    Standing,
    admit,
    early_refusal,
)

ZONE = "Asia/Shanghai"
NOW = datetime(2026, 11, 24, 4, 0, tzinfo=UTC)  # Tuesday 12:00 in Shanghai


@pytest.mark.parametrize(
    ("period", "at", "key"),
    [
        (Period.PERMANENT, NOW, "all"),
        (Period.DAY, NOW, "2026-11-24"),
        (Period.DAY, datetime(2026, 11, 24, 16, 0, tzinfo=UTC), "2026-11-25"),  # 00:00 +8
        (Period.WEEK, NOW, "2026-W48"),
        # Sunday 23:59:59 and Monday 00:00:00 in Shanghai: two ISO weeks.
        (Period.WEEK, datetime(2026, 11, 29, 15, 59, 59, tzinfo=UTC), "2026-W48"),
        (Period.WEEK, datetime(2026, 11, 29, 16, 0, 0, tzinfo=UTC), "2026-W49"),
        (Period.WEEK, datetime(2027, 1, 1, 4, 0, tzinfo=UTC), "2026-W53"),  # ISO year
        (Period.MONTH, datetime(2026, 11, 30, 16, 0, tzinfo=UTC), "2026-12"),
        (Period.YEAR, datetime(2026, 12, 31, 16, 0, tzinfo=UTC), "2027"),
    ],
)
def test_a_period_key_is_taken_in_the_activitys_zone(
    period: Period, at: datetime, key: str
) -> None:
    assert period.key(at, ZONE) == key


NO_CAPS = PersonCaps()


def entry(
    *policies: Policy, caps: PersonCaps = NO_CAPS, early: tuple[str | None, ...] = ()
) -> Entry:
    participation = Participation(1, policies, caps)
    return Entry(participation, early or (None,) * len(policies), NOW, ZONE)


def test_no_policies_admits_everyone_through_no_policy() -> None:
    assert admit(entry(), Standing({})).policy is None


def test_the_first_policy_by_priority_that_admits_applies() -> None:
    low = Policy(1, priority=5)
    high = Policy(2, priority=1, points_cost=10)
    admission = admit(entry(low, high), Standing({}, balance=3))
    assert admission.policy == low  # high refuses: 3 points, 10 needed
    assert admit(entry(low, high), Standing({}, balance=10)).policy == high


def test_a_user_no_policy_admits_gets_every_reason() -> None:
    joins = Policy(3, 3, joins=Limit(2, Period.WEEK))
    wins = Policy(4, 4, wins=Limit(1, Period.DAY))
    counts = {"p3:2026-W48": (2, 0), "p4:2026-11-24": (0, 1)}
    e = entry(
        Policy(1, 1, tag="vip"), Policy(2, 2, levels=frozenset({3})), joins, wins,
        Policy(5, 5, points_cost=1),
        early=(NOT_IN_AUDIENCE, LEVEL_REQUIRED, None, None, None),
    )  # fmt: skip
    with pytest.raises(NotAdmitted) as refused:
        admit(e, Standing(counts, balance=0))
    assert refused.value.reasons == {
        1: NOT_IN_AUDIENCE,
        2: LEVEL_REQUIRED,
        3: JOIN_LIMIT_REACHED,
        4: WIN_LIMIT_REACHED,
        5: INSUFFICIENT_POINTS,
    }
    assert refused.value.code == "not_admitted"


def test_early_refusals_come_from_the_audience_and_the_level() -> None:
    assert early_refusal(Policy(1, 1, tag="vip"), False, 3) == NOT_IN_AUDIENCE
    assert early_refusal(Policy(1, 1, tag="vip"), True, 3) is None
    assert early_refusal(Policy(1, 1, levels=frozenset({3, 4})), True, 2) == LEVEL_REQUIRED
    assert early_refusal(Policy(1, 1, levels=frozenset({3, 4})), True, 4) is None


def test_an_early_refusal_reads_no_counter_of_its_policy() -> None:
    e = entry(Policy(1, 1, tag="vip", joins=Limit(1)), Policy(2, 2, joins=Limit(1)),
              early=(NOT_IN_AUDIENCE, None))  # fmt: skip
    assert e.counters(awards=[7]) == ["p2:all"]


def test_a_policys_joins_and_wins_of_one_period_share_a_counter_row() -> None:
    same = Policy(1, 1, joins=Limit(3, Period.DAY), wins=Limit(1, Period.DAY))
    admission = admit(entry(same), Standing({"p1:2026-11-24": (2, 0)}))
    assert entry(same).counters(awards=[7]) == ["p1:2026-11-24"]
    assert admission.counted(7, wins=False) == {"p1:2026-11-24": (1, 0)}
    assert admission.counted(7, wins=True) == {"p1:2026-11-24": (1, 1)}
    # Its joins and its wins are read apart from the one row.
    with pytest.raises(NotAdmitted) as joined:
        admit(entry(same), Standing({"p1:2026-11-24": (3, 0)}))
    assert joined.value.reasons == {1: JOIN_LIMIT_REACHED}
    with pytest.raises(NotAdmitted) as won:
        admit(entry(same), Standing({"p1:2026-11-24": (1, 1)}))
    assert won.value.reasons == {1: WIN_LIMIT_REACHED}


def test_a_join_counts_its_policys_joins_and_a_win_its_wins_and_the_caps() -> None:
    policy = Policy(1, 1, joins=Limit(3, Period.WEEK), wins=Limit(1, Period.DAY), points_cost=5)
    caps = PersonCaps(Limit(2, Period.MONTH), once_per_prize=True)
    admission = admit(entry(policy, caps=caps), Standing({}, balance=5))
    assert admission.cost == 5
    assert admission.counted(7, wins=False) == {"p1:2026-W48": (1, 0)}
    assert admission.counted(7, wins=True) == {
        "p1:2026-W48": (1, 0), "p1:2026-11-24": (0, 1), "cap:2026-11": (0, 1), "won:7": (0, 1),
    }  # fmt: skip


def test_the_caps_stop_a_win_but_never_the_fallback() -> None:
    caps = PersonCaps(Limit(2, Period.DAY), once_per_prize=True)
    fresh = admit(entry(caps=caps), Standing({}))
    assert not fresh.capped(7, wins=True)
    won_seven = admit(entry(caps=caps), Standing({"won:7": (0, 1)}))
    assert won_seven.capped(7, wins=True)
    assert not won_seven.capped(8, wins=True)
    two_today = admit(entry(caps=caps), Standing({"cap:2026-11-24": (0, 2)}))
    assert two_today.capped(8, wins=True)
    assert not two_today.capped(8, wins=False)


def test_policies_are_kept_by_priority_and_their_ids_are_unique() -> None:
    p = Participation(1, (Policy(1, 9), Policy(2, 1)))
    assert [x.policy_id for x in p.policies] == [2, 1]
    with pytest.raises(InvalidConfig):
        Participation(1, (Policy(1, 1), Policy(1, 2)))
    with pytest.raises(InvalidConfig):
        Limit(-1)
    assert Participation(1).empty
    assert not Participation(1, caps=PersonCaps(once_per_prize=True)).empty
