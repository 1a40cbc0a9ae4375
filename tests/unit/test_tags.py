"""Tags: every operator against hand-computed answers, malformed conditions refused with their
position, references and rings, the board's answers and the preview (fakes of the store)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import replace
from datetime import date, timedelta

import pytest

from raffle.adapters.tag_language import RuleEngineLanguage
from raffle.domain.profiles import Gender, Profile, facts
from raffle.domain.tags import (
    Clause,
    InvalidTag,
    MalformedCondition,
    Operator,
    Tag,
    TagCycle,
    TagInUse,
    TagKind,
    UnknownTag,
    Value,
    check,
    evaluation_order,
    references,
)
from raffle.service import tags as use
from raffle.service.audience import TagBoard
from raffle.service.ports.tags import Check, StoredTags

TODAY = date(2026, 11, 24)
LANGUAGE = RuleEngineLanguage()
# Ann: 66 years old today, level 3, SN "X", a VIP (attribute), joined 2024-05-01 (a date).
ANN = Profile(
    "ann",
    level=3,
    gender=Gender.FEMALE,
    birth_date=date(1960, 5, 1),
    region="sh",
    sn="X",
    attributes={"vip": True, "joined": date(2024, 5, 1), "score": 7.5, "nick": "A"},
)
BOB = Profile("bob", level=1, birth_date=date(2001, 2, 3))  # 25, no SN, no attributes
EVE = Profile("eve", birth_date=date(1976, 11, 24), attributes={"vip": "yes", "score": "high"})
# Eve turns 50 today; her attributes have the wrong types (a text where a bool or number is).

# (field, operator, value) -> whether it holds for (ann, bob, eve), worked out by hand.
TABLE: list[tuple[str, Operator, Value | Sequence[Value] | None, tuple[bool, bool, bool]]] = [
    ("age", Operator.GT, 50, (True, False, False)),  # eve is exactly 50
    ("age", Operator.GE, 50, (True, False, True)),
    ("age", Operator.LT, 30, (False, True, False)),
    ("age", Operator.LE, 25, (False, True, False)),
    ("age", Operator.EQ, 50, (False, False, True)),
    ("age", Operator.NE, 50, (True, True, False)),
    ("sn", Operator.EXISTS, None, (True, False, False)),
    ("sn", Operator.MISSING, None, (False, True, True)),
    ("sn", Operator.EQ, "X", (True, False, False)),
    ("sn", Operator.NE, "X", (False, False, False)),  # missing: every comparison is false
    ("level", Operator.IN, [3, 4], (True, False, False)),
    ("level", Operator.NOT_IN, [3, 4], (False, True, True)),  # eve: level 0, known
    ("region", Operator.IN, ["sh", "bj"], (True, False, False)),
    ("region", Operator.NOT_IN, ["bj"], (True, False, False)),  # missing region: false
    ("gender", Operator.EQ, "f", (True, False, False)),
    ("birth_date", Operator.LT, date(2000, 1, 1), (True, False, True)),
    ("birth_date", Operator.GE, date(2001, 2, 3), (False, True, False)),
    ("attrs.joined", Operator.LT, date(2025, 1, 1), (True, False, False)),
    ("attrs.vip", Operator.EQ, True, (True, False, False)),  # eve's "yes" is not true
    ("attrs.vip", Operator.EXISTS, None, (True, False, True)),
    ("attrs.score", Operator.GT, 5, (True, False, False)),  # eve's text: a wrong type, false
    ("attrs.score", Operator.LE, 7.5, (True, False, False)),
    ("attrs.nick", Operator.EQ, "A", (True, False, False)),
    ("attrs.nick", Operator.IN, ["A", "B"], (True, False, False)),
]


def _answers(condition: str) -> tuple[bool, ...]:
    holds = LANGUAGE.compile(condition)
    return tuple(holds(facts(p, TODAY) | {"tags": {}}) for p in (ANN, BOB, EVE))


@pytest.mark.parametrize(("field", "operator", "value", "expected"), TABLE)
def test_every_operator_answers_as_worked_out_by_hand(
    field: str, operator: Operator, value: Value | None, expected: tuple[bool, bool, bool]
) -> None:
    assert _answers(Clause(field, operator, value).condition()) == expected


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("age > 50 or level == 3", (True, False, False)),
        ("(age != null and age > 60) or level == 1", (True, True, False)),  # bob: level
        ("not (sn != null)", (False, True, True)),
        ('attrs&["score"] > 5 or region == "sh"', (True, False, False)),
        ('attrs["score"] == 7.5', (True, False, False)),  # a missing key: false, no error
        ('birth_date < d"2000-01-01" and level < 3', (False, False, True)),
    ],
)
def test_written_conditions_combine_with_and_or_not(
    condition: str, expected: tuple[bool, bool, bool]
) -> None:
    assert _answers(condition) == expected


@pytest.mark.parametrize(
    ("condition", "line", "column"),
    [
        ("age > > 50", 1, 7),
        ("age > 50 and\n  level ==", 2, 11),  # the end of the text
        ("age > 50\n and (level == 3))", 2, 18),
        ("level == 3 and\nagee > 1", 2, 1),  # an unknown name
        ("level == 3 and $", 1, 16),
        ('sn == "a" and tags.x', 1, 15),  # a tag is referred to as tags["NAME"] only
    ],
)
def test_a_malformed_condition_is_refused_with_its_position(
    condition: str, line: int, column: int
) -> None:
    with pytest.raises(MalformedCondition) as refused:
        LANGUAGE.compile(check(Tag("t", TagKind.DYNAMIC, condition)).condition)
    assert (refused.value.line, refused.value.column) == (line, column)
    assert refused.value.code == "malformed_condition"


@pytest.mark.parametrize(
    "condition", ['age > "old"', 'sn =~ "["', 'birth_date < d"2000-13-01"', "level + "]
)
def test_mismatched_types_and_bad_literals_are_refused_at_save(condition: str) -> None:
    with pytest.raises(MalformedCondition):
        LANGUAGE.compile(condition)


@pytest.mark.parametrize(
    "clause",
    [
        Clause("agee", Operator.GT, 1),
        Clause("tags", Operator.EXISTS),
        Clause("level", Operator.IN, 3),
        Clause("level", Operator.GT, [3]),
        Clause("attrs.vip", Operator.GT, True),
        Clause("age", Operator.GT, 1, source="orders"),
    ],
)
def test_a_clause_that_cannot_be_written_is_refused(clause: Clause) -> None:
    with pytest.raises(InvalidTag):
        clause.condition()


def test_references_are_read_outside_strings_and_comments() -> None:
    text = """tags["vip"] and not tags[ 'new_user' ] or sn == "tags['fake']" # tags["comment"]"""
    assert references(text) == {"vip", "new_user"}


def test_names_static_tags_without_condition_and_dynamic_tags_with_one_are_checked() -> None:
    for bad in (
        Tag("Vip", TagKind.STATIC),
        Tag("vip", TagKind.STATIC, "level > 1"),
        Tag("vip", TagKind.DYNAMIC, "  "),
        Tag("vip", TagKind.DYNAMIC, "level > 1 or " * 200),
    ):
        with pytest.raises(InvalidTag):
            check(bad)


class FakeTagStore:
    def __init__(self) -> None:
        self.version_, self.saved, self.lists = 0, dict[str, Tag](), dict[str, set[str]]()
        self.revisions: dict[str, int] = {}
        self.member_reads = 0
        self.reading = asyncio.Event()  # set: member reads answer
        self.reading.set()

    async def version(self) -> int:
        return self.version_

    async def load(self) -> StoredTags:
        return StoredTags(self.version_, dict(self.saved), dict(self.revisions))

    async def save(self, tag: Tag, check: Check) -> bool:
        check({n: t for n, t in self.saved.items() if n != tag.name})
        self.version_ += 1
        self.revisions[tag.name] = self.version_
        new = tag.name not in self.saved
        self.saved[tag.name] = tag
        return new

    async def delete(self, name: str, check: Check) -> bool:
        check({n: t for n, t in self.saved.items() if n != name})
        self.version_ += 1
        self.lists.pop(name, None)
        return self.saved.pop(name, None) is not None

    async def members(self, name: str) -> frozenset[str]:
        self.member_reads += 1
        await self.reading.wait()
        return frozenset(self.lists.get(name, ()))

    async def add_members(self, name: str, user_ids: Iterable[str]) -> int:
        self.version_ += 1
        self.revisions[name] = self.version_
        have = self.lists.setdefault(name, set())
        new = set(user_ids) - have
        have |= new
        return len(new)

    async def remove_members(self, name: str, user_ids: Iterable[str]) -> int:
        self.version_ += 1
        self.revisions[name] = self.version_
        have = self.lists.setdefault(name, set())
        gone = have & set(user_ids)
        have -= gone
        return len(gone)


class SilentNews:
    def __init__(self) -> None:
        self.announced: list[int] = []

    async def announce(self, version: int) -> None:
        self.announced.append(version)

    async def changes(self) -> AsyncIterator[None]:
        yield


def _board() -> TagBoard:
    return TagBoard(FakeTagStore(), SilentNews(), LANGUAGE)


async def test_tags_combine_other_tags_static_and_dynamic() -> None:
    board = _board()
    await use.save_tag(Tag("seniors", TagKind.DYNAMIC, "age >= 60"), board)
    await use.save_tag(Tag("listed", TagKind.STATIC), board)
    either = """(tags["seniors"] or tags["listed"]) and not sn == null"""
    await use.save_tag(Tag("target", TagKind.DYNAMIC, either), board)
    await use.add_members("listed", ["bob", "zed"], board)
    assert [await board.holds("target", p, TODAY) for p in (ANN, BOB, EVE)] == [True, False, False]
    assert [await board.holds("listed", p, TODAY) for p in (ANN, BOB, EVE)] == [False, True, False]
    assert await board.holds("nobody_made_this", ANN, TODAY) is False
    assert evaluation_order("target", board.tags) == ["listed", "seniors", "target"]
    assert board.news.announced[-1] == board.version  # type: ignore[attr-defined]


async def test_unknown_references_rings_and_deleting_a_referred_tag_are_refused() -> None:
    board = _board()
    with pytest.raises(UnknownTag):
        await use.save_tag(Tag("a", TagKind.DYNAMIC, 'tags["b"]'), board)
    await use.save_tag(Tag("b", TagKind.DYNAMIC, "level > 1"), board)
    await use.save_tag(Tag("a", TagKind.DYNAMIC, 'tags["b"]'), board)
    await use.save_tag(Tag("c", TagKind.DYNAMIC, 'tags["a"] and age > 3'), board)
    with pytest.raises(TagCycle) as ring:
        await use.save_tag(Tag("b", TagKind.DYNAMIC, 'tags["c"] or level > 1'), board)
    assert "b -> c -> a -> b" in ring.value.message
    with pytest.raises(TagCycle):
        await use.save_tag(Tag("d", TagKind.DYNAMIC, 'tags["d"]'), board)
    with pytest.raises(TagInUse):
        await use.delete_tag("b", board)
    assert sorted(board.tags) == ["a", "b", "c"]  # nothing refused was written
    assert board.tags["b"].condition == "level > 1"
    await use.delete_tag("c", board)
    with pytest.raises(UnknownTag):
        await use.delete_tag("c", board)


async def test_members_are_read_once_per_version() -> None:
    board = _board()
    store: FakeTagStore = board.store  # type: ignore[assignment]
    await use.save_tag(Tag("listed", TagKind.STATIC), board)
    await use.add_members("listed", ["ann"], board)
    for _ in range(50):
        assert await board.holds("listed", ANN, TODAY)
    assert store.member_reads == 1
    await use.remove_members("listed", ["ann"], board)
    assert not await board.holds("listed", ANN, TODAY)
    assert store.member_reads == 2
    await use.save_tag(Tag("d", TagKind.DYNAMIC, "level > 0"), board)
    with pytest.raises(InvalidTag):  # a dynamic tag has no member list
        await use.add_members("d", ["ann"], board)


async def test_a_change_to_one_tag_keeps_what_was_read_of_the_others() -> None:
    board = _board()
    store: FakeTagStore = board.store  # type: ignore[assignment]
    for name in ("a", "b"):
        await use.save_tag(Tag(name, TagKind.STATIC), board)
        await use.add_members(name, ["ann"], board)
    assert await board.holds("a", ANN, TODAY)
    assert await board.holds("b", ANN, TODAY)
    assert store.member_reads == 2
    await use.remove_members("a", ["ann"], board)
    assert not await board.holds("a", ANN, TODAY)
    assert await board.holds("b", ANN, TODAY)
    assert store.member_reads == 3  # a's members again, b's kept


async def test_an_answer_is_kept_only_while_the_profile_and_the_tags_are_those_it_was_for() -> None:
    board = _board()
    await use.save_tag(Tag("high", TagKind.DYNAMIC, "level >= 3"), board)
    low = Profile("ann", level=1)
    assert not await board.holds("high", low, TODAY)
    assert not await board.holds("high", low, TODAY)  # kept
    assert await board.holds("high", replace(low, level=3), TODAY)  # a changed profile
    assert not await board.holds("high", low, TODAY + timedelta(days=1))  # another day
    await use.save_tag(Tag("high", TagKind.DYNAMIC, "level >= 1"), board)
    assert await board.holds("high", low, TODAY)  # the tag changed: asked again


async def test_hundreds_of_draws_asking_at_once_share_one_read_of_the_members() -> None:
    board = _board()
    store: FakeTagStore = board.store  # type: ignore[assignment]
    await use.save_tag(Tag("a", TagKind.STATIC), board)
    await use.add_members("a", ["ann"], board)
    store.reading.clear()  # the read waits: every draw comes while it is under way
    asking = [asyncio.create_task(board.holds("a", p, TODAY)) for p in (ANN, BOB) * 150]
    await asyncio.sleep(0)
    store.reading.set()
    assert await asyncio.gather(*asking) == [True, False] * 150
    assert store.member_reads == 1


class FakeProfiles:
    def __init__(self, profiles: Iterable[Profile]) -> None:
        self._profiles = sorted(profiles, key=lambda p: p.user_id)

    async def get(self, user_id: str) -> Profile | None:
        return next((p for p in self._profiles if p.user_id == user_id), None)

    async def put(self, profile: Profile) -> None:
        raise NotImplementedError

    async def page(self, after: str | None, limit: int) -> Sequence[Profile]:
        return [p for p in self._profiles if after is None or p.user_id > after][:limit]


async def test_a_preview_counts_every_profile_and_samples_the_first() -> None:
    board = _board()
    await use.save_tag(Tag("even", TagKind.DYNAMIC, "level in [0, 2, 4, 6, 8]"), board)
    everyone = [Profile(f"u{n:05}", level=n % 10) for n in range(1203)]
    shown = await use.preview("even", board, FakeProfiles(everyone), TODAY, sample=3)
    assert (shown.matched, shown.scanned, shown.complete) == (602, 1203, True)
    assert shown.sample == ["u00000", "u00002", "u00004"]
    cut = await use.preview("even", board, FakeProfiles(everyone), TODAY, sample=3, scan=600)
    assert (cut.matched, cut.scanned, cut.complete) == (300, 600, False)
    with pytest.raises(UnknownTag):
        await use.preview("odd", board, FakeProfiles(everyone), TODAY)
