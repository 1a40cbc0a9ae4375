"""A decision tree as a JSON document (stored, sent over HTTP, written in campaign files)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from raffle.domain.profile_fields import ISO_DATE
from raffle.domain.route_tree_checks import FIELDS, InvalidRouteTree, TreeProblem
from raffle.domain.route_trees import Leaf, Line, Node, Op, RouteTree, Scalar, Subject, Value

SCALARS = (str, int, float, bool)


def to_document(tree: RouteTree) -> dict[str, Any]:
    return {
        "name": tree.name,
        "description": tree.description,
        "time_zone": tree.time_zone,
        "root": tree.root,
        "nodes": [
            {
                "id": n.id,
                n.subject.value: n.name,
                "lines": [_line_document(line) for line in n.lines],
            }
            for n in tree.nodes
        ],
        "leaves": [{"id": leaf.id, "activity": leaf.activity_id} for leaf in tree.leaves],
    }


def from_document(data: object) -> RouteTree:
    """The tree a document writes; InvalidRouteTree (reason `malformed`) naming every part
    that is not of its shape. Dates are "YYYY-MM-DD" strings, read as dates where the field
    can hold one (`birth_date`, free attributes)."""
    found: list[TreeProblem] = []

    def bad(path: tuple[str | int, ...], message: str) -> None:
        found.append(TreeProblem("malformed", path, message))

    doc = data if isinstance(data, Mapping) else {}
    if not isinstance(data, Mapping):
        bad((), "a tree is a mapping")
    known = {"name", "description", "time_zone", "root", "nodes", "leaves"}
    for key in doc:
        if key not in known:
            bad((str(key),), "unknown key")
    name = _text(doc, "name", (), bad)
    root = _text(doc, "root", (), bad)
    nodes = tuple(
        node
        for i, raw in enumerate(_list(doc, "nodes", (), bad))
        if (node := _node(raw, ("nodes", i), bad)) is not None
    )
    leaves = tuple(
        leaf
        for i, raw in enumerate(_list(doc, "leaves", (), bad))
        if (leaf := _leaf(raw, ("leaves", i), bad)) is not None
    )
    zone = _text(doc, "time_zone", (), bad, "Asia/Shanghai")
    description = _text(doc, "description", (), bad, "")
    if found:
        raise InvalidRouteTree(found)
    return RouteTree(name, root, nodes, leaves, zone, description)


def _line_document(line: Line) -> dict[str, Any]:
    out: dict[str, Any] = {"op": line.op.value}
    if line.value is not None:
        out["value"] = _written(line.value)
    out["to"] = line.to
    return out


def _written(value: Value) -> Any:
    if isinstance(value, tuple):
        return [_written(v) for v in value]
    return value.isoformat() if isinstance(value, date) else value


def _node(raw: object, at: tuple[str | int, ...], bad: Any) -> Node | None:
    if not isinstance(raw, Mapping):
        bad(at, "a node is a mapping")
        return None
    for key in raw:
        if key not in ("id", "field", "tag", "lines"):
            bad((*at, str(key)), "unknown key")
    subjects = [s for s in Subject if s.value in raw]
    if len(subjects) != 1:
        bad(at, "a node tests either a `field` or a `tag`")
        return None
    subject = subjects[0]
    node_id, name = _text(raw, "id", at, bad), _text(raw, subject.value, at, bad)
    lines = []
    for j, item in enumerate(_list(raw, "lines", at, bad)):
        if line := _line(item, name if subject is Subject.FIELD else "", (*at, "lines", j), bad):
            lines.append(line)
    return Node(node_id, subject, name, tuple(lines))


def _line(raw: object, field: str, at: tuple[str | int, ...], bad: Any) -> Line | None:
    if not isinstance(raw, Mapping):
        bad(at, "a line is a mapping")
        return None
    for key in raw:
        if key not in ("op", "value", "to"):
            bad((*at, str(key)), "unknown key")
    try:
        op = Op(str(raw.get("op")))
    except ValueError:
        bad((*at, "op"), f"one of {', '.join(o.value for o in Op)}")
        return None
    value = raw.get("value")
    if isinstance(value, list):
        items = [_read(v, field, (*at, "value", k), bad) for k, v in enumerate(value)]
        return Line(op, _text(raw, "to", at, bad), tuple(v for v in items if v is not None))
    read = None if value is None else _read(value, field, (*at, "value"), bad)
    return Line(op, _text(raw, "to", at, bad), read)


def _read(value: object, field: str, at: tuple[str | int, ...], bad: Any) -> Scalar | None:
    if not isinstance(value, SCALARS):
        bad(at, "a text, number or true/false")
        return None
    datable = FIELDS.get(field) is date or field.startswith("attrs.")
    if datable and isinstance(value, str) and ISO_DATE.fullmatch(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            bad(at, f"{value!r} is no date")
            return None
    return value


def _leaf(raw: object, at: tuple[str | int, ...], bad: Any) -> Leaf | None:
    if not isinstance(raw, Mapping):
        bad(at, "a leaf is a mapping")
        return None
    for key in raw:
        if key not in ("id", "activity"):
            bad((*at, str(key)), "unknown key")
    activity = raw.get("activity")
    if not isinstance(activity, int) or isinstance(activity, bool) or activity < 1:
        bad((*at, "activity"), "an activity id")
        return None
    return Leaf(_text(raw, "id", at, bad), activity)


def _text(
    raw: Mapping[Any, Any],
    key: str,
    at: tuple[str | int, ...],
    bad: Any,
    default: str | None = None,
) -> str:
    value = raw.get(key, default)
    if not isinstance(value, str):
        bad((*at, key), "a text" if key in raw else "missing")
        return ""
    return value


def _list(raw: Mapping[Any, Any], key: str, at: tuple[str | int, ...], bad: Any) -> list[Any]:
    value = raw.get(key)
    if not isinstance(value, list):
        bad((*at, key), "a list" if key in raw else "missing")
        return []
    return value
