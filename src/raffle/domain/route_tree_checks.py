"""What makes a decision tree unfit to save, each kind with its own stable reason."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from raffle.domain.activity import Activity, ActivityState
from raffle.domain.errors import Path, RaffleError
from raffle.domain.profiles import Gender
from raffle.domain.route_trees import Line, Op, RouteTree, Scalar, Subject

NAME = re.compile(r"[\w.-]{1,64}")  # \w: any script's letters and digits, and _
ORDERED = frozenset({Op.LT, Op.LE, Op.GT, Op.GE})
LISTS = frozenset({Op.IN, Op.NOT_IN})
MAX_NODES = 500  # a tree an operator can still read, and a walk that stays short

# The type of each fact of `profiles.facts` a node may test; `attrs.<name>` may hold any.
FIELDS: dict[str, type] = {
    "user_id": str,
    "phone": str,
    "level": int,
    "gender": Gender,
    "birth_date": date,
    "age": int,
    "region": str,
    "channel": str,
    "sn": str,
}


@dataclass(frozen=True, slots=True)
class TreeProblem:
    reason: str  # stable: cycle, dangling_line, unknown_activity, activity_cannot_run, …
    path: Path
    message: str

    def __str__(self) -> str:
        where = ".".join(map(str, self.path))
        return f"{where}: {self.message} ({self.reason})" if where else self.message


class InvalidRouteTree(RaffleError):
    code = "invalid_route_tree"

    def __init__(self, problems: list[TreeProblem]) -> None:
        super().__init__("; ".join(str(p) for p in problems))
        self.problems = problems


def problems(
    tree: RouteTree, activities: Mapping[int, Activity], now: datetime | None
) -> list[TreeProblem]:
    """Everything wrong with the tree, each with its reason and where: empty when it may be
    saved. `activities` are the known ones (stored, or in the same campaign); without `now`
    an activity's window is not looked at, only its state."""
    return [*structure(tree), *leaf_problems(tree, activities, now)]


def structure(tree: RouteTree) -> list[TreeProblem]:
    """The tree's own problems, whatever activities exist: its items, then (once they read
    well) where its lines lead."""
    found = _shape(tree)
    return found or _graph(tree)


def leaf_problems(
    tree: RouteTree, activities: Mapping[int, Activity], now: datetime | None, *, known: bool = True
) -> list[TreeProblem]:
    """Leaves naming an activity that is not in `activities` (unless `known` is False: more
    may exist elsewhere) or one that can never run: closed, or over by `now`."""
    found = []
    for i, leaf in enumerate(tree.leaves):
        activity = activities.get(leaf.activity_id)
        where = ("leaves", i, "activity")
        if activity is None:
            if known:
                found.append(
                    _p("unknown_activity", where, f"activity {leaf.activity_id} not found")
                )
            continue
        over = now is not None and activity.end_at <= now
        if activity.state is ActivityState.CLOSED or over:
            state = "over" if over else activity.state
            found.append(
                _p("activity_cannot_run", where, f"activity {leaf.activity_id} is {state}")
            )
    return found


def _shape(tree: RouteTree) -> list[TreeProblem]:
    """Names, ids, lines' operators and values: what can be told one item at a time."""
    found = []
    if not NAME.fullmatch(tree.name):
        found.append(_p("invalid_name", ("name",), "1 to 64 letters, digits, _ . or -"))
    try:
        ZoneInfo(tree.time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        found.append(_p("invalid_time_zone", ("time_zone",), f"unknown {tree.time_zone!r}"))
    if len(tree.nodes) + len(tree.leaves) > MAX_NODES:
        found.append(_p("too_large", (), f"more than {MAX_NODES} nodes and leaves"))
    seen: set[str] = set()
    items = [("nodes", i, n.id) for i, n in enumerate(tree.nodes)]
    for section, i, item_id in [*items, *(("leaves", i, x.id) for i, x in enumerate(tree.leaves))]:
        if item_id in seen:
            found.append(_p("duplicate_id", (section, i, "id"), f"{item_id!r} is used twice"))
        seen.add(item_id)
    for i, node in enumerate(tree.nodes):
        found += [_at(p, "nodes", i) for p in _node(node.subject, node.name, node.lines)]
    return found


def _node(subject: Subject, name: str, lines: tuple[Line, ...]) -> list[TreeProblem]:
    found = []
    kind: type | None = bool
    if subject is Subject.FIELD:
        kind = FIELDS.get(name)
        if kind is None and not (name.startswith("attrs.") and len(name) > 6):
            known = ", ".join([*FIELDS, "attrs.<name>"])
            return [_p("unknown_field", ("field",), f"no field {name!r}; known: {known}")]
    elif not name:
        found.append(_p("unknown_field", ("tag",), "a tag node names its tag"))
    defaults = [j for j, line in enumerate(lines) if line.op is Op.DEFAULT]
    if not defaults:
        found.append(_p("missing_default", ("lines",), "no default line"))
    for j in defaults[1:]:
        found.append(_p("duplicate_default", ("lines", j), "a second default line"))
    for j, line in enumerate(lines):
        if problem := _line(subject, kind, line.op, line.value):
            found.append(_at(problem, "lines", j))
    return found


def _line(subject: Subject, kind: type | None, op: Op, value: object) -> TreeProblem | None:
    if op in (Op.DEFAULT, Op.EXISTS):
        return _valueless(subject, op, value)
    if subject is Subject.TAG and op not in (Op.EQ, Op.NE):
        return _p("operator_unfit", ("op",), f"a tag is tested with == or !=, not {op}")
    if op in ORDERED and kind in (Gender, bool):
        return _p("operator_unfit", ("op",), f"{op} needs an ordered field")
    if op in LISTS and (not isinstance(value, tuple) or not value):
        return _p("value_type", ("value",), f"{op} takes a non-empty list")
    values = value if isinstance(value, tuple) and op in LISTS else (value,)
    wrong = [v for v in values if not _fits(kind, v) or (op in ORDERED and isinstance(v, bool))]
    return _p("value_type", ("value",), f"{wrong[0]!r} is not a {_name(kind)}") if wrong else None


def _valueless(subject: Subject, op: Op, value: object) -> TreeProblem | None:
    if subject is Subject.TAG and op is Op.EXISTS:
        return _p("operator_unfit", ("op",), "a tag always holds or not: use == true")
    return None if value is None else _p("value_type", ("value",), f"{op} takes no value")


def _fits(kind: type | None, value: object) -> bool:
    if kind is None:  # a free attribute: any of profiles.Attribute's types
        return isinstance(value, Scalar)
    if kind is Gender:
        return isinstance(value, str) and value in set(Gender)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is date:
        return type(value) is date
    return isinstance(value, kind)


def _name(kind: type | None) -> str:
    if kind is Gender:
        return "gender (" + ", ".join(g.value for g in Gender) + ")"
    return "scalar" if kind is None else kind.__name__


def _graph(tree: RouteTree) -> list[TreeProblem]:
    """Where the lines lead: nowhere, around, or never to some node or leaf."""
    found = []
    nodes = {n.id: n for n in tree.nodes}
    leaves = {leaf.id for leaf in tree.leaves}
    if tree.root not in nodes:
        return [_p("unknown_root", ("root",), f"no node {tree.root!r}")]
    for i, node in enumerate(tree.nodes):
        for j, line in enumerate(node.lines):
            if line.to not in nodes and line.to not in leaves:
                found.append(_p("dangling_line", ("nodes", i, "lines", j, "to"), f"no {line.to!r}"))
    found += _cycles(tree, nodes)
    reached = _reached(tree.root, nodes)
    index = {n.id: ("nodes", i) for i, n in enumerate(tree.nodes)}
    index |= {x.id: ("leaves", i) for i, x in enumerate(tree.leaves)}
    for item_id, where in index.items():
        if item_id not in reached:
            found.append(_p("unreachable", where, f"{item_id!r} is on no path from the root"))
    return found


def _cycles(tree: RouteTree, nodes: Mapping[str, object]) -> list[TreeProblem]:
    """A line back to a node on the path that leads to it, once per such line (depth-first
    over every node, reached or not)."""
    found, done = [], set()
    lines = {n.id: [line.to for line in n.lines] for n in tree.nodes}
    where = {n.id: i for i, n in enumerate(tree.nodes)}
    for start, targets_of_start in lines.items():
        if start in done:
            continue
        stack, on_path = [(start, iter(targets_of_start))], {start}
        while stack:
            current, targets = stack[-1]
            target = next(targets, None)
            if target is None:
                stack.pop()
                on_path.discard(current)
                done.add(current)
            elif target in on_path:
                j = lines[current].index(target)
                at = ("nodes", where[current], "lines", j, "to")
                found.append(_p("cycle", at, f"{current!r} leads back to {target!r}"))
            elif target in nodes and target not in done:
                stack.append((target, iter(lines[target])))
                on_path.add(target)
    return found


def _reached(root: str, nodes: Mapping[str, object]) -> set[str]:
    reached, todo = {root}, [root]
    while todo:
        node = nodes.get(todo.pop())
        for line in getattr(node, "lines", ()):
            if line.to not in reached:
                reached.add(line.to)
                todo.append(line.to)
    return reached


def _p(reason: str, path: Path, message: str) -> TreeProblem:
    return TreeProblem(reason, path, message)


def _at(problem: TreeProblem, *prefix: str | int) -> TreeProblem:
    return TreeProblem(problem.reason, (*prefix, *problem.path), problem.message)
