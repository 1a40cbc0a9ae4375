"""Tags (seed 004 用户标签): a static member list, or a condition on a profile's facts.

A dynamic tag's condition is an expression in the tag language (rule-engine's; see
docs/tags.md) over the names `facts()` gives: `age > 50`, `sn != null`, `level in [3, 4]`,
`birth_date < d"2000-01-01"`, `attrs&["vip"] == true` (`&[` reads a missing attribute as
null), and other tags as `tags["NAME"]`, combined with `and`, `or`, `not`. Seed 004's
structured form (data source, field, operator, target value) is a `Clause`, written into
that language by `Clause.condition()`.

Missing fields and wrong types never fail a draw: a field the profile lacks is null, so
`exists` is false for it and every comparison of it (`==`, `!=`, `<`, `in` …) is false in a
clause; and a condition whose evaluation fails for a profile (comparing a text with a
number, say) does not hold for that profile. Each tag is evaluated on its own, so such a
failure makes only that tag false: `not tags["t"]` then holds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from raffle.domain.errors import InvalidConfig, RaffleError

NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
ATTRIBUTE = re.compile(r"attrs\.([A-Za-z_][A-Za-z0-9_]{0,63})")
MAX_CONDITION = 2000  # characters of a condition: a rule an operator reads, not a program

# The facts a condition may name, and their kind (the compiler checks types at save).
FIELDS: dict[str, str] = {
    "user_id": "text",
    "phone": "text",
    "level": "number",
    "gender": "text",
    "birth_date": "date",
    "age": "number",
    "region": "text",
    "channel": "text",
    "sn": "text",
    "attrs": "map",
    "tags": "map",  # the other tags' answers for the same profile, by name
}
SOURCES = ("profile",)  # seed 004's data source: the profile is the one there is

# Strings and comments hide what looks like a tag reference; they are blanked (keeping
# every position) before references are looked for.
_LITERAL = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|#[^\n]*")
_TAGS = re.compile(r"\btags\b")
_REFERENCE = re.compile(r"""\btags\s*\[\s*(["'])([a-z][a-z0-9_]{0,63})\1\s*\]""")


class TagKind(StrEnum):
    STATIC = "static"  # a list of members
    DYNAMIC = "dynamic"  # a condition


class InvalidTag(RaffleError):
    code = "invalid_tag"


class UnknownTag(RaffleError):
    code = "unknown_tag"


class TagCycle(RaffleError):
    """Tags that refer to each other in a ring: none of them could be evaluated."""

    code = "tag_cycle"


class TagInUse(RaffleError):
    """A tag other tags refer to cannot be deleted."""

    code = "tag_in_use"


class MalformedCondition(RaffleError):
    """A condition that cannot be compiled; `line` and `column` (from 1) point at where."""

    code = "malformed_condition"

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"{message} (line {line}, column {column})")
        self.line, self.column = line, column


@dataclass(frozen=True, slots=True)
class Tag:
    """A named audience. `condition`: the expression of a dynamic tag, empty for a static one."""

    name: str
    kind: TagKind
    condition: str = ""
    description: str = ""

    def references(self) -> frozenset[str]:
        """The tags the condition refers to (as `tags["NAME"]`)."""
        return references(self.condition)


class Operator(StrEnum):
    EQ = "=="
    NE = "!="
    GT = ">"
    GE = ">="
    LT = "<"
    LE = "<="
    IN = "in"
    NOT_IN = "not in"
    EXISTS = "exists"
    MISSING = "not exists"


Value = str | int | float | bool | date
_ORDERED = (Operator.GT, Operator.GE, Operator.LT, Operator.LE)


@dataclass(frozen=True, slots=True)
class Clause:
    """Seed 004's structured condition: data source, field, operator, target value."""

    field: str
    operator: Operator
    value: Value | Sequence[Value] | None = None
    source: str = "profile"

    def condition(self) -> str:
        """The clause in the tag language; every comparison is false when the field is
        missing (`!=` and `not in` included)."""
        if self.source not in SOURCES:
            raise InvalidTag(f"data source {self.source!r} is not one of {', '.join(SOURCES)}")
        field = _field(self.field)
        if self.operator is Operator.EXISTS:
            return f"{field} != null"
        if self.operator is Operator.MISSING:
            return f"{field} == null"
        if self.operator in (Operator.IN, Operator.NOT_IN):
            if isinstance(self.value, str | bytes) or not isinstance(self.value, Sequence):
                raise InvalidTag(f"{self.operator} takes a list of values")
            # One `==` a value, not the language's `in`, which takes true for 1 as Python
            # does: a listed value matches exactly when `==` would.
            test = " or ".join(f"{field} == {_literal(v)}" for v in self.value) or "false"
            if self.operator is Operator.IN:
                return test if len(self.value) < 2 else f"({test})"
            return f"{field} != null and not ({test})"
        value = self.value
        if not isinstance(value, str | int | float | date):
            raise InvalidTag(f"{self.operator} takes one value")
        if self.operator is Operator.EQ:
            return f"{field} == {_literal(value)}"
        if self.operator in _ORDERED and isinstance(value, bool):
            raise InvalidTag(f"{self.operator} compares numbers, dates or texts, not true/false")
        return f"{field} != null and {field} {self.operator} {_literal(value)}"


def _field(name: str) -> str:
    """The field as the language reads it: `attrs.vip` is `attrs&["vip"]`."""
    known = [f for f in FIELDS if FIELDS[f] != "map"]
    if name in known:
        return name
    if attribute := ATTRIBUTE.fullmatch(name):
        return f'attrs&["{attribute[1]}"]'
    raise InvalidTag(f"unknown field {name!r}: one of {', '.join(known)}, or attrs.NAME")


def _literal(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date):
        return f'd"{value.isoformat()}"'
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


def blanked(condition: str) -> str:
    """The condition with its strings and comments blanked out, every position kept."""
    return _LITERAL.sub(lambda m: " " * len(m.group()), condition)


def references(condition: str) -> frozenset[str]:
    """The tags the condition refers to, as `tags["NAME"]` (outside strings and comments)."""
    text = blanked(condition)
    return frozenset(m[2] for m in _REFERENCE.finditer(condition) if text[m.start()] == "t")


def position(text: str, offset: int) -> tuple[int, int]:
    """(line, column), from 1, of the character at `offset` in `text`."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def check(tag: Tag) -> Tag:
    """The tag if its name, kind and condition are well formed (the condition is compiled
    apart, by the tag language); InvalidTag or MalformedCondition otherwise."""
    if not NAME.fullmatch(tag.name):
        raise InvalidTag(f"a tag's name is 1-64 of a-z, 0-9 and _, from a letter: {tag.name!r}")
    if tag.kind is TagKind.STATIC:
        if tag.condition.strip():
            raise InvalidTag("a static tag has members, not a condition")
        return tag
    if not tag.condition.strip():
        raise InvalidTag("a dynamic tag needs a condition")
    if len(tag.condition) > MAX_CONDITION:
        raise InvalidTag(f"a condition has at most {MAX_CONDITION} characters")
    text = blanked(tag.condition)
    for found in _TAGS.finditer(text):
        if not _REFERENCE.match(tag.condition, found.start()):
            raise MalformedCondition(
                'another tag is referred to as tags["NAME"]', *position(text, found.start())
            )
    return tag


def check_references(tag: Tag, others: Mapping[str, Tag]) -> None:
    """`tag` (to be saved among `others`, the tags saved before) refers only to tags that
    exist, and through them never back to itself."""
    if unknown := sorted(tag.references() - set(others) - {tag.name}):
        raise UnknownTag(f"tag {tag.name!r} refers to unknown tags: {', '.join(unknown)}")
    tags = {**others, tag.name: tag}
    path = _cycle(tag.name, tags, (), set())
    if path:
        raise TagCycle(f"tags refer to each other in a ring: {' -> '.join(path)}")


def _cycle(
    name: str, tags: Mapping[str, Tag], path: tuple[str, ...], done: set[str]
) -> tuple[str, ...]:
    if name in path:
        return (*path[path.index(name) :], name)
    if name in done or name not in tags:
        return ()
    for reference in sorted(tags[name].references()):
        if found := _cycle(reference, tags, (*path, name), done):
            return found
    done.add(name)
    return ()


def evaluation_order(name: str, tags: Mapping[str, Tag]) -> list[str]:
    """The tags `name` depends on, then `name`: each after those it refers to."""
    order: list[str] = []
    _visit(name, tags, order)
    return order


def _visit(name: str, tags: Mapping[str, Tag], order: list[str]) -> None:
    if name in order or name not in tags:
        return
    for reference in sorted(tags[name].references()):
        _visit(reference, tags, order)
    order.append(name)


def referrers(name: str, tags: Iterable[Tag]) -> list[str]:
    """The tags that refer to `name`."""
    return sorted(t.name for t in tags if name in t.references())


@dataclass(frozen=True, slots=True)
class TagDefinition:
    """A tag as a campaign file gives it: a static one with its members."""

    tag: Tag
    members: tuple[str, ...] = ()


def definition_problems(definitions: Sequence[TagDefinition]) -> list[InvalidConfig]:
    """What is wrong with a file's tags, each at its path (`tags.<i>.…`): names used twice,
    malformed tags, members of a dynamic tag, rings among them. A reference to a tag not in
    the file is for the store to check."""
    found, seen = [], dict[str, Tag]()
    for i, definition in enumerate(definitions):
        tag = definition.tag
        if tag.name in seen:
            found.append(InvalidConfig(f"tag {tag.name!r} is defined twice", ("tags", i, "name")))
        try:
            check(tag)
        except RaffleError as error:
            found.append(InvalidConfig(error.message, ("tags", i)))
        if definition.members and tag.kind is TagKind.DYNAMIC:
            found.append(InvalidConfig("a dynamic tag has no members", ("tags", i, "members")))
        seen[tag.name] = tag
    for i, definition in enumerate(definitions):
        if path := _cycle(definition.tag.name, seen, (), set()):
            message = f"tags refer to each other in a ring: {' -> '.join(path)}"
            found.append(InvalidConfig(message, ("tags", i, "condition")))
    return found


def in_order(definitions: Sequence[TagDefinition]) -> list[TagDefinition]:
    """The definitions, each after the file's tags it refers to (the order to save them in)."""
    by_name = {d.tag.name: d for d in definitions}
    tags = {name: d.tag for name, d in by_name.items()}
    order: list[str] = []
    for name in by_name:
        _visit(name, tags, order)
    return [by_name[name] for name in order]
