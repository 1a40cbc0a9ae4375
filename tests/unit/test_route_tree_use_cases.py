"""The decision tree's use cases on fakes: a player's route reads their profile, takes the
age in the tree's zone and asks only the tags on its path; saves are checked and versioned."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raffle.domain.activity import Activity, ActivityState
from raffle.domain.profiles import Gender, Profile
from raffle.domain.route_tree_checks import InvalidRouteTree
from raffle.domain.route_trees import MISSING, Leaf, Line, Node, Op, RouteTree, Subject
from raffle.service.route_trees import (
    RouteTreeConflict,
    UnknownRouteTree,
    delete_tree,
    my_route,
    route_attributes,
    save_tree,
    trees,
)
from tests.unit.fakes import ConfigStore, FakeUnitOfWork
from tests.unit.test_route_trees import (
    ACTIVITIES,
    BIRTHS,
    GENDERS,
    LEVELS,
    REGIONS,
    SCORES,
    TAGS,
    TREES,
    _flatten,
    expected,
)

# 20:00 UTC on 24 November is already the 25th in Shanghai.
NOW = datetime(2026, 11, 24, 20, tzinfo=UTC)
WINDOW = (NOW - timedelta(days=1), NOW + timedelta(days=9))


class Clock:
    def now(self) -> datetime:
        return NOW


class Profiles:
    def __init__(self, *profiles: Profile) -> None:
        self.known = {p.user_id: p for p in profiles}

    async def of(self, user_id: str) -> Profile:
        return self.known.get(user_id, Profile(user_id))


class Audience:
    def __init__(self, members: dict[str, set[str]]) -> None:
        self.members = members
        self.asked: list[tuple[str, str, date]] = []

    async def holds(self, tag: str, profile: Profile, today: date) -> bool:
        self.asked.append((tag, profile.user_id, today))
        return profile.user_id in self.members.get(tag, set())


TREE = RouteTree(
    "main",
    "age",
    (
        Node("age", Subject.FIELD, "age", (Line(Op.GE, "vip", 18), Line(Op.DEFAULT, "minor"))),
        Node("vip", Subject.TAG, "vip", (Line(Op.EQ, "gold", True), Line(Op.DEFAULT, "sex"))),
        Node(
            "sex",
            Subject.FIELD,
            "gender",
            (Line(Op.EQ, "women", "f"), Line(Op.DEFAULT, "everyone")),
        ),
    ),
    (
        Leaf("minor", 1),
        Leaf("gold", 2),
        Leaf("women", 3),
        Leaf("everyone", 4),
    ),
)


def _world() -> ConfigStore:
    store = ConfigStore()
    for i in (1, 2, 3, 4):
        store.activities[i] = Activity(i, f"a{i}", 1, *WINDOW, state=ActivityState.RUNNING)
    return store


def _uow(store: ConfigStore) -> FakeUnitOfWork:
    return FakeUnitOfWork(store)


async def test_a_player_is_routed_by_their_profile_with_the_age_of_the_trees_zone() -> None:
    store = _world()
    await save_tree(TREE, base_version=0, actor="op", uow=lambda: _uow(store), clock=Clock())
    # 18 on 25 November: an adult in Shanghai, where it is the 25th, a minor in UTC.
    ann = Profile("ann", gender=Gender.FEMALE, birth_date=date(2008, 11, 25))
    audience = Audience({"vip": set()})
    found = await my_route(
        "ann",
        "main",
        uow=lambda: _uow(store),
        profiles=Profiles(ann),
        audience=audience,
        clock=Clock(),
    )
    assert found.activity_id == 3
    assert [(s.node, s.fact, s.line) for s in found.path] == [
        ("age", 18, 0),
        ("vip", False, 1),
        ("sex", "f", 0),
    ]
    assert audience.asked == [("vip", "ann", date(2026, 11, 25))]


async def test_tags_off_the_path_are_not_asked_and_an_unknown_user_has_no_facts() -> None:
    store = _world()
    await save_tree(TREE, base_version=0, actor="op", uow=lambda: _uow(store), clock=Clock())
    audience = Audience({"vip": {"nobody"}})
    found = await my_route(
        "nobody",
        "main",
        uow=lambda: _uow(store),
        profiles=Profiles(),
        audience=audience,
        clock=Clock(),
    )
    assert (found.activity_id, found.path[0].fact, audience.asked) == (1, MISSING, [])


async def test_routing_by_an_unknown_tree_is_refused() -> None:
    with pytest.raises(UnknownRouteTree):
        await my_route(
            "ann",
            "nope",
            uow=lambda: _uow(_world()),
            profiles=Profiles(),
            audience=Audience({}),
            clock=Clock(),
        )


async def test_a_save_is_checked_and_changes_nothing_when_refused() -> None:
    store = _world()
    store.activities[4] = Activity(4, "a4", 1, *WINDOW, state=ActivityState.CLOSED)
    with pytest.raises(InvalidRouteTree) as refused:
        await save_tree(TREE, base_version=None, actor="op", uow=lambda: _uow(store), clock=Clock())
    assert [p.reason for p in refused.value.problems] == ["activity_cannot_run"]
    assert store.route_trees == {}


async def test_saves_and_deletes_go_over_the_version_they_read() -> None:
    store = _world()

    def uow() -> FakeUnitOfWork:
        return _uow(store)

    await save_tree(TREE, base_version=0, actor="op", uow=uow, clock=Clock())
    with pytest.raises(RouteTreeConflict):
        await save_tree(TREE, base_version=0, actor="op", uow=uow, clock=Clock())
    with pytest.raises(RouteTreeConflict):
        await delete_tree("main", base_version=7, actor="op", uow=uow, clock=Clock())
    await delete_tree("main", base_version=1, actor="op", uow=uow, clock=Clock())
    assert await trees(uow) == []
    with pytest.raises(UnknownRouteTree):
        await delete_tree("main", base_version=None, actor="op", uow=uow, clock=Clock())


def test_made_up_attributes_route_as_given() -> None:
    found = route_attributes(TREE, {"age": 30, "gender": "m"}, {"vip"})
    assert (found.activity_id, [s.node for s in found.path]) == (2, ["age", "vip"])
    assert route_attributes(TREE, {"age": 30, "gender": "m"}, set()).activity_id == 4


@st.composite
def _profiles(draw: st.DrawFn) -> tuple[Profile, set[str]]:
    def maybe(values: st.SearchStrategy[Any]) -> Any:
        return draw(st.one_of(st.none(), values))

    score = maybe(SCORES)
    profile = Profile(
        "u",
        level=draw(LEVELS),
        gender=maybe(GENDERS.map(Gender)),
        birth_date=maybe(BIRTHS),
        region=maybe(REGIONS),
        attributes={} if score is None else {"score": score},
    )
    return profile, set(draw(st.lists(st.sampled_from(TAGS), unique=True)))


def _known_facts(profile: Profile, today: date) -> dict[str, Any]:
    """The facts the tree may test, as the API documents them: unknown ones left out, the
    age in whole years on `today`."""
    found: dict[str, Any] = {"level": profile.level, "attrs": dict(profile.attributes)}
    if profile.gender is not None:
        found["gender"] = profile.gender.value
    if profile.region is not None:
        found["region"] = profile.region
    if (born := profile.birth_date) is not None:
        found["birth_date"] = born
        found["age"] = today.year - born.year - ((today.month, today.day) < (born.month, born.day))
    return found


@settings(max_examples=150, deadline=None)
@given(TREES, st.lists(_profiles(), min_size=1, max_size=5))
def test_players_are_routed_by_their_profiles_exactly_as_an_independent_walk(
    nested: Any, players: list[tuple[Profile, set[str]]]
) -> None:
    store = ConfigStore()
    store.activities = dict(ACTIVITIES)
    tree = replace(_flatten(nested), name="generated")
    asyncio.run(save_tree(tree, base_version=0, actor="op", uow=lambda: _uow(store), clock=Clock()))
    shanghai = date(2026, 11, 25)  # NOW in the tree's zone
    for profile, tags in players:
        audience = Audience({tag: {"u"} for tag in tags})
        found = asyncio.run(
            my_route(
                "u",
                "generated",
                uow=lambda: _uow(store),
                profiles=Profiles(profile),
                audience=audience,
                clock=Clock(),
            )
        )
        activity, lines = expected(nested, _known_facts(profile, shanghai), tags)
        assert (found.activity_id, [s.line for s in found.path]) == (activity, lines)
        passed = [tree.node(s.node) for s in found.path]
        assert [a[0] for a in audience.asked] == [  # asked lazily: the tags passed, in order
            n.name for n in passed if n is not None and n.subject is Subject.TAG
        ]
