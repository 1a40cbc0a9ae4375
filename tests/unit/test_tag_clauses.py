"""Seed 004's clauses, property-based: for generated profiles and clauses, the compiled
condition answers as an independent reading of the documented semantics (docs/tags.md)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from datetime import date
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from raffle.adapters.tag_language import RuleEngineLanguage
from raffle.domain.profiles import Profile, facts
from raffle.domain.tags import Clause, MalformedCondition, Operator

TODAY = date(2026, 11, 24)
LANGUAGE = RuleEngineLanguage()
ORDERED: dict[Operator, Callable[[Any, Any], bool]] = {
    Operator.GT: operator.gt,
    Operator.GE: operator.ge,
    Operator.LT: operator.lt,
    Operator.LE: operator.le,
}

numbers = st.integers(-5, 5)
texts = st.sampled_from(["", "a", "b", "X", "中"])
dates = st.dates(date(1990, 1, 1), date(1990, 1, 5))
values = st.one_of(numbers, texts, st.booleans(), dates)


def kind(value: Any) -> str:
    """The language's type of a value: true is no number, a date no text."""
    return type(value).__name__ if isinstance(value, bool | str | date) else "number"


def same(left: Any, right: Any) -> bool:
    return kind(left) == kind(right) and left == right


def expected(clause: Clause, known: dict[str, Any]) -> bool:
    """docs/tags.md, read independently: a missing field is null, every comparison with it
    false, and a comparison of two types false."""
    name = clause.field.removeprefix("attrs.")
    value = known["attrs"].get(name) if clause.field.startswith("attrs.") else known.get(name)
    if clause.operator in (Operator.EXISTS, Operator.MISSING):
        return (value is not None) is (clause.operator is Operator.EXISTS)
    if value is None:
        return False
    target: Any = clause.value
    answers: dict[Operator, Callable[[], bool]] = {
        Operator.IN: lambda: any(same(value, t) for t in target),
        Operator.NOT_IN: lambda: not any(same(value, t) for t in target),
        Operator.EQ: lambda: same(value, target),
        Operator.NE: lambda: not same(value, target),
    }
    if clause.operator in answers:
        return answers[clause.operator]()
    return kind(value) == kind(target) and ORDERED[clause.operator](value, target)


TYPED = {"level": "number", "sn": "str", "birth_date": "date"}  # the facts' declared types


def mistyped(clause: Clause) -> bool:
    """A clause ordering a typed fact against a value of another type: refused at save
    (equality of two types is only false)."""
    if clause.field not in TYPED or clause.operator not in ORDERED:
        return False
    return kind(clause.value) != TYPED[clause.field]


profiles = st.builds(
    Profile,
    user_id=st.just("u"),
    level=numbers,
    sn=st.none() | texts,
    birth_date=st.none() | dates,
    attributes=st.dictionaries(st.sampled_from(["a", "b"]), values, max_size=2),
)
fields = st.sampled_from(["level", "sn", "birth_date", "attrs.a", "attrs.b"])


@st.composite
def clauses(draw: st.DrawFn) -> Clause:
    chosen = draw(st.sampled_from(list(Operator)))
    if chosen in (Operator.EXISTS, Operator.MISSING):
        return Clause(draw(fields), chosen)
    if chosen in (Operator.IN, Operator.NOT_IN):
        return Clause(draw(fields), chosen, draw(st.lists(values, max_size=3)))
    if chosen in ORDERED:
        return Clause(draw(fields), chosen, draw(st.one_of(numbers, texts, dates)))
    return Clause(draw(fields), chosen, draw(values))


@settings(max_examples=400, deadline=None)
@given(profile=profiles, clause=clauses())
def test_a_clause_answers_as_the_documented_semantics_say(profile: Profile, clause: Clause) -> None:
    known = facts(profile, TODAY)
    try:
        holds = LANGUAGE.compile(clause.condition())
    except MalformedCondition:
        assert mistyped(clause), clause.condition()
        return
    assert not mistyped(clause), clause.condition()
    assert holds(known | {"tags": {}}) is expected(clause, known), clause.condition()
