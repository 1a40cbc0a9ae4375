"""Decision trees: generated trees route generated users exactly as an independent walk
written here does; each kind of invalid tree is refused with its reason; documents round trip."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raffle.domain.activity import Activity, ActivityState
from raffle.domain.route_tree_checks import InvalidRouteTree, problems
from raffle.domain.route_tree_documents import from_document, to_document
from raffle.domain.route_trees import (
    MISSING,
    Leaf,
    Line,
    Node,
    Op,
    RouteTree,
    Subject,
    fact_of,
    route,
)

NOW = datetime(2026, 11, 24, 12, tzinfo=UTC)
ACTIVITY_IDS = (101, 102, 103, 104)
ACTIVITIES = {
    i: Activity(i, f"a{i}", 1, NOW - timedelta(days=1), NOW + timedelta(days=30))
    for i in ACTIVITY_IDS
}

# The facts a generated user may have, each from a small set so that lines often match.
AGES = st.integers(0, 90)
LEVELS = st.integers(0, 5)
GENDERS = st.sampled_from(["f", "m", "x"])
REGIONS = st.sampled_from(["north", "south", "east", "west"])
SCORES = st.one_of(
    st.integers(-3, 3), st.sampled_from([0.5, 1.0, 2.5]), st.sampled_from(["a", "b"]), st.booleans()
)
BIRTHS = st.dates(date(1950, 1, 1), date(2020, 12, 31))
FACTS = {
    "age": AGES,
    "level": LEVELS,
    "gender": GENDERS,
    "region": REGIONS,
    "attrs.score": SCORES,
    "birth_date": BIRTHS,
}
ORDERED_OPS = ["==", "!=", "<", "<=", ">", ">=", "in", "not in", "exists"]
UNORDERED_OPS = ["==", "!=", "in", "not in", "exists"]
TAGS = ["vip", "new"]


def _values(field: str, op: str) -> st.SearchStrategy[Any]:
    values = FACTS[field]
    if field == "attrs.score" and op in ("<", "<=", ">", ">="):
        values = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, 2.5]), st.just("a"))
    if op == "exists":
        return st.none()
    if op in ("in", "not in"):
        return st.lists(values, min_size=1, max_size=3).map(tuple)
    return values


@st.composite
def _line(draw: st.DrawFn, field: str) -> tuple[str, Any]:
    unordered = field == "gender"
    op = draw(st.sampled_from(UNORDERED_OPS if unordered else ORDERED_OPS))
    return op, draw(_values(field, op))


@st.composite
def _tag_line(draw: st.DrawFn) -> tuple[str, Any]:
    return draw(st.sampled_from(["==", "!="])), draw(st.booleans())


# A generated tree, nested: ("leaf", activity) or ("node", (kind, name), [(op, value, child)],
# default child). Walked below by `expected`, and flattened into a RouteTree by `_flatten`.
LEAVES = st.sampled_from(ACTIVITY_IDS).map(lambda a: ("leaf", a))


def _nodes(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    @st.composite
    def node(draw: st.DrawFn) -> Any:
        if draw(st.booleans()):
            subject = ("tag", draw(st.sampled_from(TAGS)))
            tests = [draw(_tag_line()) for _ in range(draw(st.integers(0, 2)))]
        else:
            subject = ("field", draw(st.sampled_from(sorted(FACTS))))
            tests = draw(st.lists(_line(subject[1]), max_size=4))
        lines = [(op, value, draw(children)) for op, value in tests]
        return ("node", subject, lines, draw(children))

    return node()


TREES = st.recursive(LEAVES, _nodes, max_leaves=12).filter(lambda t: t[0] == "node")


@st.composite
def _users(draw: st.DrawFn) -> tuple[dict[str, Any], set[str]]:
    facts: dict[str, Any] = {"attrs": {}}
    for name, values in FACTS.items():
        if draw(st.booleans()):
            if name.startswith("attrs."):
                facts["attrs"][name[6:]] = draw(values)
            else:
                facts[name] = draw(values)
    return facts, set(draw(st.lists(st.sampled_from(TAGS), unique=True)))


def _holds(op: str, value: Any, fact: Any) -> bool:
    """The line semantics, as the API documents them, written apart from the domain's."""
    if op == "exists" or fact is None:
        return op == "exists" and fact is not None
    if op in ("in", "not in"):
        return any(_same(fact, v) for v in value) == (op == "in")
    if op in ("==", "!="):
        return _same(fact, value) == (op == "==")
    numbers = all(type(x) in (int, float) for x in (fact, value))
    if not numbers and not (type(fact) is type(value) and type(fact) in (str, date)):
        return False
    return {
        "<": fact < value,
        "<=": fact <= value,
        ">": fact > value,
        ">=": fact >= value,
    }[op]


def _same(a: Any, b: Any) -> bool:
    if type(a) in (int, float) and type(b) in (int, float):
        return bool(a == b)
    return type(a) is type(b) and a == b


def expected(tree: Any, facts: dict[str, Any], tags: set[str]) -> tuple[int, list[int]]:
    """The activity and the index of the line taken at each node, by recursion on the
    nested tree: the first line that holds, or the default (index: after the others)."""
    if tree[0] == "leaf":
        return tree[1], []
    _, (kind, name), lines, default = tree
    if kind == "tag":
        fact: Any = name in tags
    elif name.startswith("attrs."):
        fact = facts["attrs"].get(name[6:])
    else:
        fact = facts.get(name)
    for i, (op, value, child) in enumerate(lines):
        if _holds(op, value, fact):
            activity, path = expected(child, facts, tags)
            return activity, [i, *path]
    activity, path = expected(default, facts, tags)
    return activity, [len(lines), *path]


def _flatten(tree: Any) -> RouteTree:
    nodes: list[Node] = []
    leaves: list[Leaf] = []
    ids = itertools.count()

    def add(item: Any) -> str:
        item_id = f"n{next(ids)}"
        if item[0] == "leaf":
            leaves.append(Leaf(item_id, item[1]))
            return item_id
        _, (kind, name), lines, default = item
        made = [Line(Op(op), add(child), value) for op, value, child in lines]
        made.append(Line(Op.DEFAULT, add(default)))
        nodes.append(Node(item_id, Subject(kind), name, tuple(made)))
        return item_id

    root = add(tree)
    return RouteTree("generated", root, tuple(nodes), tuple(leaves))


@settings(max_examples=300, deadline=None)
@given(TREES, st.lists(_users(), min_size=1, max_size=8))
def test_generated_users_are_routed_exactly_as_an_independent_walk(
    nested: Any, users: list[tuple[dict[str, Any], set[str]]]
) -> None:
    tree = _flatten(nested)
    assert problems(tree, ACTIVITIES, NOW) == []
    assert from_document(to_document(tree)) == tree
    for facts, tags in users:

        def read(node: Node, facts: dict[str, Any] = facts, tags: set[str] = tags) -> object:
            if node.subject is Subject.TAG:
                return node.name in tags
            return fact_of(facts, node.name)

        found = route(tree, read)
        activity, lines = expected(nested, facts, tags)
        assert (found.activity_id, [s.line for s in found.path]) == (activity, lines)
        assert found.path[0].node == tree.root
        assert tree.leaf(found.leaf) == Leaf(found.leaf, activity)


def test_the_path_names_each_node_the_fact_it_read_and_the_line_taken() -> None:
    tree = _tree()
    found = route(tree, lambda n: fact_of({"age": 30, "attrs": {}}, n.name))
    assert found.activity_id == 102
    assert [(s.node, s.fact, s.line, s.op, s.value) for s in found.path] == [
        ("by_age", 30, 1, Op.GE, 18),
        ("by_region", MISSING, 1, Op.DEFAULT, None),
    ]


def _tree(**changes: Any) -> RouteTree:
    tree = RouteTree(
        "adults",
        "by_age",
        (
            Node(
                "by_age",
                Subject.FIELD,
                "age",
                (Line(Op.LT, "kids", 18), Line(Op.GE, "by_region", 18), Line(Op.DEFAULT, "kids")),
            ),
            Node(
                "by_region",
                Subject.FIELD,
                "region",
                (Line(Op.IN, "north", ("north", "east")), Line(Op.DEFAULT, "rest")),
            ),
        ),
        (Leaf("kids", 101), Leaf("north", 103), Leaf("rest", 102)),
    )
    return replace(tree, **changes)


def _node(tree: RouteTree, node_id: str, **changes: Any) -> RouteTree:
    nodes = tuple(replace(n, **changes) if n.id == node_id else n for n in tree.nodes)
    return replace(tree, nodes=nodes)


def _lines(*lines: Line) -> dict[str, Any]:
    return {"lines": lines}


def _reasons(tree: RouteTree, activities: dict[int, Activity] | None = None) -> set[tuple]:  # type: ignore[type-arg]
    found = problems(tree, ACTIVITIES if activities is None else activities, NOW)
    return {(p.reason, ".".join(map(str, p.path))) for p in found}


def test_a_valid_tree_has_no_problem() -> None:
    assert problems(_tree(), ACTIVITIES, NOW) == []


def test_a_cycle_is_refused_at_the_line_that_closes_it() -> None:
    looped = _node(
        _tree(),
        "by_region",
        **_lines(Line(Op.EQ, "by_age", "south"), Line(Op.DEFAULT, "rest")),
    )
    looped = replace(looped, leaves=(*looped.leaves[:1], looped.leaves[2]))  # `north` unused
    assert _reasons(looped) == {("cycle", "nodes.1.lines.0.to")}


def test_a_line_to_nothing_is_refused() -> None:
    dangling = _node(_tree(), "by_region", **_lines(Line(Op.DEFAULT, "nowhere")))
    reasons = _reasons(dangling)
    assert ("dangling_line", "nodes.1.lines.0.to") in reasons


def test_a_leaf_of_an_unknown_activity_is_refused() -> None:
    tree = replace(_tree(), leaves=(Leaf("kids", 101), Leaf("north", 999), Leaf("rest", 102)))
    assert _reasons(tree) == {("unknown_activity", "leaves.1.activity")}


@pytest.mark.parametrize(
    "activity",
    [
        replace(ACTIVITIES[103], state=ActivityState.CLOSED),
        replace(ACTIVITIES[103], begin_at=NOW - timedelta(days=9), end_at=NOW - timedelta(days=1)),
    ],
    ids=["closed", "over"],
)
def test_a_leaf_of_an_activity_that_can_never_run_is_refused(activity: Activity) -> None:
    assert _reasons(_tree(), {**ACTIVITIES, 103: activity}) == {
        ("activity_cannot_run", "leaves.1.activity")
    }


def test_an_unreachable_node_or_leaf_is_refused() -> None:
    orphan = Node("orphan", Subject.TAG, "vip", (Line(Op.DEFAULT, "kids"),))
    tree = replace(
        _tree(), nodes=(*_tree().nodes, orphan), leaves=(*_tree().leaves, Leaf("x", 101))
    )
    assert _reasons(tree) == {("unreachable", "nodes.2"), ("unreachable", "leaves.3")}


def test_a_node_without_a_default_line_is_refused() -> None:
    tree = _node(_tree(), "by_region", **_lines(Line(Op.IN, "north", ("north",))))
    assert ("missing_default", "nodes.1.lines") in _reasons(tree)


@pytest.mark.parametrize(
    ("name", "line", "reason"),
    [
        ("age", Line(Op.LT, "kids", "18"), "value_type"),
        ("age", Line(Op.EQ, "kids", True), "value_type"),
        ("age", Line(Op.IN, "kids", (1, "2")), "value_type"),
        ("age", Line(Op.IN, "kids", ()), "value_type"),
        ("age", Line(Op.IN, "kids", 3), "value_type"),
        ("gender", Line(Op.EQ, "kids", "female"), "value_type"),
        ("gender", Line(Op.LT, "kids", "f"), "operator_unfit"),
        ("birth_date", Line(Op.LT, "kids", "2000-01-01"), "value_type"),
        ("attrs.vip", Line(Op.GT, "kids", True), "value_type"),
        ("region", Line(Op.EXISTS, "kids", "north"), "value_type"),
        ("shoe_size", Line(Op.EQ, "kids", 42), "unknown_field"),
    ],
)
def test_a_line_whose_value_does_not_fit_its_field_is_refused(
    name: str, line: Line, reason: str
) -> None:
    tree = _node(_tree(), "by_region", name=name, lines=(line, Line(Op.DEFAULT, "north")))
    tree = replace(tree, leaves=tree.leaves[:2])  # `rest` is no longer reached
    found = _reasons(tree)
    assert {r for r, _ in found} == {reason}


def test_a_tag_node_takes_true_or_false_with_equality_only() -> None:
    lines = (
        Line(Op.EQ, "north", "yes"),
        Line(Op.GT, "north", True),
        Line(Op.EXISTS, "north"),
        Line(Op.NE, "north", False),
        Line(Op.DEFAULT, "rest"),
    )
    tree = _node(_tree(), "by_region", subject=Subject.TAG, name="vip", lines=lines)
    assert _reasons(tree) == {
        ("value_type", "nodes.1.lines.0.value"),
        ("operator_unfit", "nodes.1.lines.1.op"),
        ("operator_unfit", "nodes.1.lines.2.op"),
    }


def test_ids_roots_names_and_zones_are_checked() -> None:
    tree = _tree(name="has space", root="nope", time_zone="Mars/Base")
    tree = replace(tree, leaves=(*tree.leaves, Leaf("kids", 101)))
    assert {r for r, _ in _reasons(tree)} == {"invalid_name", "invalid_time_zone", "duplicate_id"}
    assert _reasons(_tree(root="nope")) == {("unknown_root", "root")}


def test_a_malformed_document_names_each_bad_part() -> None:
    document = to_document(_tree())
    document["nodes"][0]["lines"][0]["op"] = "~"
    document["nodes"][1] = {"id": "by_region", "field": "region", "tag": "vip", "lines": []}
    document["leaves"][0]["activity"] = "101"
    document["colour"] = "red"
    with pytest.raises(InvalidRouteTree) as refused:
        from_document(document)
    assert {(p.reason, ".".join(map(str, p.path))) for p in refused.value.problems} == {
        ("malformed", "nodes.0.lines.0.op"),
        ("malformed", "nodes.1"),
        ("malformed", "leaves.0.activity"),
        ("malformed", "colour"),
    }


def test_dates_are_read_where_the_field_holds_dates() -> None:
    document = to_document(_tree())
    document["nodes"][1]["field"] = "birth_date"
    document["nodes"][1]["lines"][0] = {"op": "<", "value": "2000-02-29", "to": "north"}
    tree = from_document(document)
    assert tree.nodes[1].lines[0].value == date(2000, 2, 29)
    assert to_document(tree) == document
