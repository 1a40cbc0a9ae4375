"""Decision trees: operators save (checked), list and delete them; a player asks their route."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date
from zoneinfo import ZoneInfo

from raffle.domain.errors import RaffleError
from raffle.domain.profiles import Profile, facts
from raffle.domain.route_tree_checks import InvalidRouteTree, problems
from raffle.domain.route_trees import (
    MISSING,
    Node,
    Route,
    RouteTree,
    Subject,
    TreeVersion,
    fact_of,
    route,
    walk,
)
from raffle.service.ports import Clock, UnitOfWork
from raffle.service.ports.audiences import Audience, Profiles


class UnknownRouteTree(RaffleError):
    code = "unknown_route_tree"


class RouteTreeConflict(RaffleError):
    """The tree was saved (or deleted) by someone else since the version the change is on."""

    code = "route_tree_conflict"


async def save_tree(
    tree: RouteTree,
    *,
    base_version: int | None,
    actor: str,
    uow: Callable[[], UnitOfWork],
    clock: Clock,
) -> TreeVersion:
    """Check the tree against the stored activities and save it as the name's next version.
    With `base_version` (0: the tree is new) it is saved only over that version."""
    now = clock.now()
    async with uow() as writer:
        activities = {}
        for leaf_activity in {leaf.activity_id for leaf in tree.leaves}:
            if (found := await writer.activities.get(leaf_activity)) is not None:
                activities[leaf_activity] = found
        if wrong := problems(tree, activities, now):
            raise InvalidRouteTree(wrong)
        version = await next_version(writer, tree.name, base_version)
        if not await writer.route_trees.add(tree.name, version, tree, actor, now):
            raise conflict(tree.name)
        await writer.commit()
    return TreeVersion(tree, version, actor, now)


async def delete_tree(
    name: str,
    *,
    base_version: int | None,
    actor: str,
    uow: Callable[[], UnitOfWork],
    clock: Clock,
) -> int:
    """Delete the tree (its versions stay in the history); the version the deletion took.
    A new tree of the name goes on counting from there."""
    async with uow() as writer:
        if await writer.route_trees.get(name) is None:
            raise UnknownRouteTree(f"no tree {name!r}")
        version = await next_version(writer, name, base_version)
        if not await writer.route_trees.add(name, version, None, actor, clock.now()):
            raise conflict(name)
        await writer.commit()
    return version


async def trees(uow: Callable[[], UnitOfWork]) -> list[TreeVersion]:
    async with uow() as reader:
        return await reader.route_trees.all()


async def stored_tree(name: str, uow: Callable[[], UnitOfWork]) -> TreeVersion:
    async with uow() as reader:
        found = await reader.route_trees.get(name)
    if found is None:
        raise UnknownRouteTree(f"no tree {name!r}")
    return found


async def my_route(
    user_id: str,
    name: str,
    *,
    uow: Callable[[], UnitOfWork],
    profiles: Profiles,
    audience: Audience,
    clock: Clock,
) -> Route:
    """The activity the tree routes the user to, and the path: each node, the user's fact
    it tested and the line taken. Tags are asked only at the nodes the walk passes."""
    tree = (await stored_tree(name, uow)).tree
    profile = await profiles.of(user_id)
    today = clock.now().astimezone(ZoneInfo(tree.time_zone)).date()
    known = facts(profile, today)
    walker = walk(tree)
    node = next(walker)
    while True:
        fact = await _fact(node, known, profile, audience, today)
        try:
            node = walker.send(fact)
        except StopIteration as done:
            found: Route = done.value
            return found


def route_attributes(tree: RouteTree, attributes: Mapping[str, object], tags: set[str]) -> Route:
    """The route for facts given as they are (`age`, `attrs.x`, …) and the tags held: what
    the CLI shows for made-up users."""
    return route(
        tree,
        lambda n: n.name in tags if n.subject is Subject.TAG else attributes.get(n.name, MISSING),
    )


async def _fact(
    node: Node, known: Mapping[str, object], profile: Profile, audience: Audience, today: date
) -> object:
    if node.subject is Subject.TAG:
        return await audience.holds(node.name, profile, today)
    return fact_of(known, node.name)


async def next_version(writer: UnitOfWork, name: str, base_version: int | None = None) -> int:
    """The version a save of tree `name` takes; RouteTreeConflict if `base_version` (0: no
    tree yet) is not the stored one."""
    last = await writer.route_trees.last_version(name)
    if base_version is not None:
        stored = await writer.route_trees.get(name)
        if base_version != (0 if stored is None else stored.version):
            raise conflict(name)
    return last + 1


def conflict(name: str) -> RouteTreeConflict:
    return RouteTreeConflict(f"tree {name!r} was changed meanwhile: read it again")
