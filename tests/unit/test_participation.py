"""The draw under participation policies and caps, on fakes: refusals change nothing, the
order records the policy, counters and points move with the draw."""

from __future__ import annotations

from datetime import date

import pytest

from raffle.domain.points import PointsAccount
from raffle.domain.policies import (
    LEVEL_REQUIRED,
    NOT_IN_AUDIENCE,
    WIN_LIMIT_REACHED,
    Limit,
    NotAdmitted,
    Participation,
    Period,
    PersonCaps,
    Policy,
)
from raffle.domain.profiles import Profile
from raffle.service.draw import Draw, DrawResult, draw
from tests.unit.usecase_world import ACTIVITY, PRIZE, THANKS, World, world


class StaticTags:
    """Tags as member lists (the Audience port, in memory)."""

    def __init__(self, members: dict[str, list[str]] | None = None) -> None:
        self.members = members or {}

    async def holds(self, tag: str, profile: Profile, today: date) -> bool:
        return profile.user_id in self.members.get(tag, ())


async def drawn(w: World, user: str = "alice", tags: StaticTags | None = None) -> DrawResult:
    return await draw(
        Draw(user, ACTIVITY), catalogue=w.catalogue, shards=w.shards, stock=w.stock, rng=w.rng,
        clock=w.clock, hints=w.hints, audience=tags or StaticTags(),
    )  # fmt: skip


async def test_a_refused_draw_keeps_its_chance_and_writes_nothing() -> None:
    w = world(rate="1")
    w.config.participation[ACTIVITY] = Participation(ACTIVITY, (Policy(7, 1, tag="vip"),))
    with pytest.raises(NotAdmitted) as refused:
        await drawn(w)
    assert refused.value.reasons == {7: NOT_IN_AUDIENCE}
    assert w.shards.store.orders == {}
    assert w.shards.store.counters == {}
    result = await drawn(w, tags=StaticTags({"vip": ["alice"]}))
    assert result.draw_count == 1  # the refused draw spent no chance
    assert w.shards.store.orders[result.order_id].policy_id == 7


async def test_a_policys_wins_limit_refuses_the_join_after_the_win() -> None:
    w = world(rate="1")
    policy = Policy(1, 1, wins=Limit(1, Period.DAY))
    w.config.participation[ACTIVITY] = Participation(ACTIVITY, (policy,))
    assert (await drawn(w)).award_id == PRIZE
    with pytest.raises(NotAdmitted) as refused:
        await drawn(w)
    assert refused.value.reasons == {1: WIN_LIMIT_REACHED}


async def test_the_activitys_wins_cap_turns_a_win_into_the_fallback() -> None:
    w = world(rate="1")
    w.config.participation[ACTIVITY] = Participation(
        ACTIVITY, caps=PersonCaps(Limit(1, Period.DAY))
    )
    results = [await drawn(w) for _ in range(3)]
    assert [(r.award_id, r.rule) for r in results] == [
        (PRIZE, "default"), (THANKS, "person_cap"), (THANKS, "person_cap"),
    ]  # fmt: skip
    assert all(w.shards.store.orders[r.order_id].policy_id is None for r in results)


async def test_a_points_cost_is_debited_with_the_draw_and_refused_when_short() -> None:
    w = world(rate="0")
    w.config.participation[ACTIVITY] = Participation(ACTIVITY, (Policy(1, 1, points_cost=4),))
    w.shards.store.points["alice"] = PointsAccount("alice", 10, 10)
    first = await drawn(w)
    await drawn(w)
    assert w.shards.store.points["alice"].available == 2
    assert ("alice", first.order_id) in w.shards.store.points_orders
    with pytest.raises(NotAdmitted):
        await drawn(w)
    assert w.shards.store.points["alice"].available == 2


class Levels:
    """Profiles with a level each (the Profiles port, in memory)."""

    def __init__(self, levels: dict[str, int]) -> None:
        self.levels = levels

    async def of(self, user_id: str) -> Profile:
        return Profile(user_id, level=self.levels.get(user_id, 0))


async def test_the_level_comes_from_the_users_profile() -> None:
    w = world(rate="0")
    w.config.participation[ACTIVITY] = Participation(
        ACTIVITY, (Policy(1, 1, levels=frozenset({3, 4})),)
    )
    profiles = Levels({"gold": 4})

    async def by(user: str) -> DrawResult:
        return await draw(
            Draw(user, ACTIVITY), catalogue=w.catalogue, shards=w.shards, stock=w.stock,
            rng=w.rng, clock=w.clock, hints=w.hints, profiles=profiles,
        )  # fmt: skip

    assert (await by("gold")).draw_count == 1
    with pytest.raises(NotAdmitted) as refused:
        await by("bronze")
    assert refused.value.reasons == {1: LEVEL_REQUIRED}
