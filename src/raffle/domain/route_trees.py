"""Decision trees (seed 003's rule tree): a user's facts walked from a root to an activity."""

from __future__ import annotations

import operator
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import Any

# What a line compares with: a profile fact's types (profiles.Attribute), or a list of them.
Scalar = str | int | float | bool | date
Value = Scalar | tuple[Scalar, ...] | None


class Op(StrEnum):
    EQ = "=="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    IN = "in"
    NOT_IN = "not in"
    EXISTS = "exists"
    DEFAULT = "default"


class Subject(StrEnum):
    """What a node tests: a profile fact (`age`, `attrs.vip`), or whether a tag holds."""

    FIELD = "field"
    TAG = "tag"


ORDER: dict[Op, Callable[[Any, Any], Any]] = {
    Op.LT: operator.lt,
    Op.LE: operator.le,
    Op.GT: operator.gt,
    Op.GE: operator.ge,
}


class Missing:
    """A fact the profile does not know: it matches only `exists` lines (as false)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING = Missing()


@dataclass(frozen=True, slots=True)
class Line:
    op: Op
    to: str  # a node's or a leaf's id
    value: Value = None


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    subject: Subject
    name: str  # the field (a name of `profiles.facts`) or the tag
    lines: tuple[Line, ...]


@dataclass(frozen=True, slots=True)
class Leaf:
    id: str
    activity_id: int


@dataclass(frozen=True, slots=True)
class RouteTree:
    """`time_zone` is where `today` is taken for the age a node tests: a walk reaches its
    leaf (and the leaf's activity) only after testing the age, so the tree's own zone."""

    name: str
    root: str
    nodes: tuple[Node, ...]
    leaves: tuple[Leaf, ...]
    time_zone: str = "Asia/Shanghai"
    description: str = ""
    # Nodes and leaves by id (the first of an id: a tree with two is refused when saved).
    _by_id: dict[str, Node | Leaf] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        by_id: dict[str, Node | Leaf] = {}
        items: list[Node | Leaf] = [*self.nodes, *self.leaves]
        for item in items:
            by_id.setdefault(item.id, item)
        object.__setattr__(self, "_by_id", by_id)

    def node(self, node_id: str) -> Node | None:
        found = self._by_id.get(node_id)
        return found if isinstance(found, Node) else None

    def leaf(self, leaf_id: str) -> Leaf | None:
        found = self._by_id.get(leaf_id)
        return found if isinstance(found, Leaf) else None

    def tags(self) -> set[str]:
        return {n.name for n in self.nodes if n.subject is Subject.TAG}


@dataclass(frozen=True, slots=True)
class TreeVersion:
    """A saved tree: versions count from 1 per name, a deletion taking one too."""

    tree: RouteTree
    version: int
    saved_by: str  # the operator
    saved_at: datetime


@dataclass(frozen=True, slots=True)
class Step:
    """A node passed: the value its fact had (MISSING if unknown) and the line taken."""

    node: str
    fact: object
    line: int  # the line's index among the node's lines
    op: Op
    value: Value


@dataclass(frozen=True, slots=True)
class Route:
    activity_id: int
    leaf: str
    path: tuple[Step, ...]


class RouteLoop(Exception):
    """A walk came back to a node: only a tree that was never checked can do that."""


def matches(op: Op, value: Value, fact: object) -> bool:
    """Whether a line holds for `fact`. A missing fact matches no line but the default; a
    fact of another type than the line's value is neither equal nor ordered to it."""
    if op is Op.DEFAULT:
        return False
    if op is Op.EXISTS:
        return fact is not MISSING
    if fact is MISSING:
        return False
    if op in (Op.IN, Op.NOT_IN):
        found = any(_equal(fact, v) for v in value) if isinstance(value, tuple) else False
        return found if op is Op.IN else not found
    if op in (Op.EQ, Op.NE):
        return _equal(fact, value) is (op is Op.EQ)
    return _ordered(op, fact, value)


def choose(node: Node, fact: object) -> int:
    """The index of the first line that holds for `fact`, else of the default line."""
    for i, line in enumerate(node.lines):
        if matches(line.op, line.value, fact):
            return i
    return next(i for i, line in enumerate(node.lines) if line.op is Op.DEFAULT)


def walk(tree: RouteTree) -> Generator[Node, object, Route]:
    """Walks a checked tree: yields each node to test and is sent the fact it tests, so the
    caller reads facts (and asks tags) as it likes, lazily. Returns the route."""
    steps: list[Step] = []
    node = tree.node(tree.root)
    while node is not None:
        if any(s.node == node.id for s in steps):
            raise RouteLoop(f"node {node.id!r} is reached twice")
        fact = yield node
        i = choose(node, fact)
        line = node.lines[i]
        steps.append(Step(node.id, fact, i, line.op, line.value))
        if (leaf := tree.leaf(line.to)) is not None:
            return Route(leaf.activity_id, leaf.id, tuple(steps))
        node = tree.node(line.to)
    raise RouteLoop(f"{tree.root if not steps else steps[-1].node!r} leads to nothing")


def route(tree: RouteTree, read: Callable[[Node], object]) -> Route:
    """The route for facts read synchronously (`read(node)`: the fact, or MISSING)."""
    walker = walk(tree)
    node = next(walker)
    while True:
        try:
            node = walker.send(read(node))
        except StopIteration as done:
            found: Route = done.value
            return found


def fact_of(facts: Mapping[str, object], name: str) -> object:
    """The fact `name` in `profiles.facts` (`attrs.x` is free attribute x), or MISSING."""
    if name.startswith("attrs."):
        attrs = facts.get("attrs")
        found = attrs.get(name[6:], MISSING) if isinstance(attrs, Mapping) else MISSING
        return MISSING if found is None else found
    return facts.get(name, MISSING)


def _number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _equal(fact: object, value: object) -> bool:
    if _number(fact) and _number(value):
        return fact == value
    return type(fact) is type(value) and fact == value


def _ordered(op: Op, fact: object, value: object) -> bool:
    numbers = _number(fact) and _number(value)
    texts_or_dates = type(fact) is type(value) and isinstance(fact, str | date)
    return (numbers or texts_or_dates) and bool(ORDER[op](fact, value))
