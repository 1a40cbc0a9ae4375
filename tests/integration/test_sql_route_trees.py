"""Decision trees on every database: saved versions, the newest read back, deletions kept in
the history, and concurrent saves over one version of which exactly one wins."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.activity import Activity, ActivityState
from raffle.domain.route_tree_checks import InvalidRouteTree
from raffle.domain.route_trees import Leaf, Line, Node, Op, RouteTree, Subject
from raffle.service.route_trees import (
    RouteTreeConflict,
    UnknownRouteTree,
    delete_tree,
    save_tree,
    stored_tree,
    trees,
)

NOW = datetime(2026, 11, 24, 12, tzinfo=UTC)
RACERS = 200
BORN = date(1970, 1, 1)


class Clock:
    def now(self) -> datetime:
        return NOW


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade(database_url)
    engine = create_engine(database_url)
    async with SqlUnitOfWork(engine) as uow:
        for i, state in ((101, ActivityState.RUNNING), (102, ActivityState.CLOSED)):
            window = (NOW - timedelta(days=1), NOW + timedelta(days=9))
            await uow.activities.save(Activity(i, f"活动 {i}", 1, *window, state=state))
        await uow.commit()
    yield engine
    await engine.dispose()


def _tree(name: str = "新人", activity: int = 101) -> RouteTree:
    return RouteTree(
        name,
        "born",
        (
            Node(
                "born",
                Subject.FIELD,
                "birth_date",
                (Line(Op.LT, "old", BORN), Line(Op.DEFAULT, "vip")),
            ),
            Node(
                "vip",
                Subject.TAG,
                "会员",
                (Line(Op.EQ, "old", True), Line(Op.DEFAULT, "young")),
            ),
        ),
        (Leaf("old", 101), Leaf("young", activity)),
        description="按年龄分流",
    )


async def test_versions_are_saved_read_back_and_deleted_into_the_history(
    engine: AsyncEngine,
) -> None:
    def uow() -> SqlUnitOfWork:
        return SqlUnitOfWork(engine)

    first = await save_tree(_tree(), base_version=0, actor="ann", uow=uow, clock=Clock())
    assert (first.version, first.saved_by) == (1, "ann")
    changed = replace(_tree(), time_zone="Europe/Paris")
    second = await save_tree(changed, base_version=1, actor="bob", uow=uow, clock=Clock())
    await save_tree(_tree("other"), base_version=None, actor="ann", uow=uow, clock=Clock())
    assert second.version == 2
    got = await stored_tree("新人", uow)
    assert (got.tree, got.version, got.saved_by, got.saved_at) == (changed, 2, "bob", NOW)
    assert [(t.tree.name, t.version) for t in await trees(uow)] == [("other", 1), ("新人", 2)]
    with pytest.raises(RouteTreeConflict):
        await save_tree(_tree(), base_version=1, actor="eve", uow=uow, clock=Clock())
    await delete_tree("新人", base_version=2, actor="ann", uow=uow, clock=Clock())
    with pytest.raises(UnknownRouteTree):
        await stored_tree("新人", uow)
    assert [t.tree.name for t in await trees(uow)] == ["other"]
    assert (await stored_tree("other", uow)).version == 1
    upper = await save_tree(_tree("OTHER"), base_version=0, actor="ann", uow=uow, clock=Clock())
    assert upper.version == 1  # names are compared as written, on every database
    again = await save_tree(_tree(), base_version=0, actor="ann", uow=uow, clock=Clock())
    assert again.version == 4  # the deletion took version 3
    async with uow() as reader:
        assert await reader.route_trees.last_version("新人") == 4


async def test_a_tree_to_an_activity_that_cannot_run_is_refused_and_nothing_is_stored(
    engine: AsyncEngine,
) -> None:
    def uow() -> SqlUnitOfWork:
        return SqlUnitOfWork(engine)

    for activity, reason in ((102, "activity_cannot_run"), (999, "unknown_activity")):
        with pytest.raises(InvalidRouteTree) as refused:
            await save_tree(
                _tree(activity=activity), base_version=None, actor="a", uow=uow, clock=Clock()
            )
        assert [(p.reason, p.path) for p in refused.value.problems] == [
            (reason, ("leaves", 1, "activity"))
        ]
    assert await trees(uow) == []


async def test_of_concurrent_saves_over_one_version_exactly_one_wins(engine: AsyncEngine) -> None:
    def uow() -> SqlUnitOfWork:
        return SqlUnitOfWork(engine)

    await save_tree(_tree(), base_version=0, actor="ann", uow=uow, clock=Clock())

    async def save(i: int) -> int | None:
        tree = replace(_tree(), description=f"by {i}")
        try:
            saved = await save_tree(tree, base_version=1, actor=f"u{i}", uow=uow, clock=Clock())
        except RouteTreeConflict:
            return None
        return saved.version

    results = await asyncio.gather(*(save(i) for i in range(RACERS)))
    winners = [i for i, version in enumerate(results) if version is not None]
    assert len(winners) == 1
    assert results[winners[0]] == 2
    stored = await stored_tree("新人", uow)
    assert (stored.version, stored.saved_by) == (2, f"u{winners[0]}")
    assert stored.tree.description == f"by {winners[0]}"
