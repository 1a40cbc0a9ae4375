"""Paid content: its checks and states, and the use cases on fakes — who reads the body, who
gets the price, what a player holds."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from raffle.domain.content import (
    BODY_MAX,
    Content,
    ContentExists,
    ContentState,
    ContentText,
    IllegalContentState,
    InvalidContent,
    PaymentRequired,
    UnknownContent,
)
from raffle.domain.fulfilment import AccessGrant
from raffle.service import content as use
from tests.unit.fakes import ConfigStore, FakeClock, FakeShards, FakeUnitOfWork

T0 = datetime(2026, 11, 25, 9, tzinfo=UTC)
TEXT = ContentText("第一讲", "概要", "## 正文", "预览", "https://example.com/c.png", 990)
DRAFT, ON, OFF = ContentState.DRAFT, ContentState.ON_SALE, ContentState.OFF_SALE


class World:
    def __init__(self) -> None:
        self.config = ConfigStore()
        self.shards = FakeShards(self.config)
        self.clock = FakeClock(T0)

    def uow(self) -> FakeUnitOfWork:
        return FakeUnitOfWork(self.config)

    async def grant(self, user: str, content_id: str, order_id: str) -> None:
        async with self.shards.for_user(user) as uow:
            await uow.grants.add(AccessGrant(user, content_id, order_id, T0))
            await uow.commit()


# --- the domain ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"title": "  "}, "title"),
        ({"title": "x" * 121}, "title"),
        ({"summary": "two\nlines"}, "summary"),
        ({"body": "x" * (BODY_MAX + 1)}, "body"),
        ({"cover": "http://example.com/c.png"}, "cover"),
        ({"cover": "javascript:alert(1)"}, "cover"),
        ({"cover": 'https://e.com/a.png" onerror="x'}, "cover"),
        ({"price_cents": -1}, "price_cents"),
    ],
)
def test_text_with_a_problem_is_refused_naming_its_field(
    change: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidContent) as refused:
        replace(TEXT, **change)  # type: ignore[arg-type]
    assert [f for f, _ in refused.value.problems] == [field]


@pytest.mark.parametrize("content_id", ["", "a b", "a/b", "x" * 65, "<script>"])
def test_an_id_that_cannot_travel_in_a_path_is_refused(content_id: str) -> None:
    with pytest.raises(InvalidContent):
        Content.draft(content_id, TEXT, T0)


def test_states_move_draft_to_on_sale_and_back_and_forth_off_sale() -> None:
    draft = Content.draft("课程-1", TEXT, T0)
    on = draft.moved(ON, T0 + timedelta(1))
    off = on.moved(OFF, T0 + timedelta(2))
    assert (draft.state, on.state, off.state, off.moved(ON, T0).state) == (DRAFT, ON, OFF, ON)
    assert on.visible
    assert not off.visible
    assert not draft.visible
    assert off.updated_at == T0 + timedelta(2)
    assert off.created_at == T0
    for content, to in ((draft, OFF), (on, DRAFT), (off, DRAFT), (on, ON)):
        with pytest.raises(IllegalContentState) as refused:
            content.moved(to, T0)
        assert refused.value.current is content.state


def test_content_on_sale_costs_at_least_a_cent() -> None:
    free = Content.draft("free", replace(TEXT, price_cents=0), T0)
    with pytest.raises(InvalidContent, match="price_cents"):
        free.moved(ON, T0)
    on = Content.draft("c", TEXT, T0).moved(ON, T0)
    with pytest.raises(InvalidContent, match="price_cents"):
        on.edited(replace(TEXT, price_cents=0), T0)
    assert free.edited(replace(TEXT, price_cents=0, title="新"), T0).text.title == "新"


# --- the use cases ------------------------------------------------------------------------


async def test_operators_create_edit_and_put_content_on_sale() -> None:
    w = World()
    made = await use.create("c1", TEXT, uow=w.uow, clock=w.clock)
    with pytest.raises(ContentExists):
        await use.create("c1", TEXT, uow=w.uow, clock=w.clock)
    w.clock.current = T0 + timedelta(hours=1)
    edited = await use.edit("c1", replace(TEXT, title="改"), uow=w.uow, clock=w.clock)
    moved = await use.move("c1", ON, uow=w.uow, clock=w.clock)

    assert made.state is DRAFT
    assert edited.text.title == "改"
    stored = await use.stored("c1", w.uow)
    assert stored == moved
    assert stored.state is ON
    assert stored.created_at == T0
    with pytest.raises(UnknownContent):
        await use.edit("nope", TEXT, uow=w.uow, clock=w.clock)
    with pytest.raises(UnknownContent):
        await use.move("nope", ON, uow=w.uow, clock=w.clock)


async def test_a_refused_change_changes_nothing() -> None:
    w = World()
    await use.create("c1", replace(TEXT, price_cents=0), uow=w.uow, clock=w.clock)
    with pytest.raises(InvalidContent):
        await use.move("c1", ON, uow=w.uow, clock=w.clock)
    with pytest.raises(IllegalContentState):
        await use.move("c1", OFF, uow=w.uow, clock=w.clock)
    assert (await use.stored("c1", w.uow)).state is DRAFT


async def test_players_browse_what_is_on_sale_only() -> None:
    w = World()
    for content_id in ("a", "b", "c", "d"):
        await use.create(content_id, TEXT, uow=w.uow, clock=w.clock)
    for content_id in ("a", "c", "d"):
        await use.move(content_id, ON, uow=w.uow, clock=w.clock)
    await use.move("d", OFF, uow=w.uow, clock=w.clock)

    first = await use.listed(w.uow, states=use.ON_SALE, limit=1)
    rest = await use.listed(w.uow, states=use.ON_SALE, after=first[-1].id)
    assert [c.id for c in first + rest] == ["a", "c"]
    assert [c.id for c in await use.listed(w.uow)] == ["a", "b", "c", "d"]


async def test_the_body_is_for_holders_others_get_the_price() -> None:
    w = World()
    await use.create("c1", TEXT, uow=w.uow, clock=w.clock)
    await use.move("c1", ON, uow=w.uow, clock=w.clock)
    await w.grant("alice", "c1", "o1")

    assert (await use.read("alice", "c1", uow=w.uow, shards=w.shards)).text.body == "## 正文"
    with pytest.raises(PaymentRequired) as refused:
        await use.read("bob", "c1", uow=w.uow, shards=w.shards)
    assert (refused.value.content_id, refused.value.price_cents) == ("c1", 990)
    opened = await use.open_content("bob", "c1", uow=w.uow, shards=w.shards)
    assert (opened.held, opened.content.text.preview) == (False, "预览")


async def test_off_sale_content_stays_with_its_holders_and_is_gone_for_the_rest() -> None:
    w = World()
    await use.create("c1", TEXT, uow=w.uow, clock=w.clock)
    await use.create("draft", TEXT, uow=w.uow, clock=w.clock)
    await use.move("c1", ON, uow=w.uow, clock=w.clock)
    await use.move("c1", OFF, uow=w.uow, clock=w.clock)
    await w.grant("alice", "c1", "o1")

    assert (await use.open_content("alice", "c1", uow=w.uow, shards=w.shards)).held
    for user, content_id in (("bob", "c1"), ("bob", "draft"), ("alice", "draft"), ("bob", "x")):
        with pytest.raises(UnknownContent):
            await use.read(user, content_id, uow=w.uow, shards=w.shards)


async def test_my_content_names_each_grant_with_its_content_if_catalogued() -> None:
    w = World()
    await use.create("c1", TEXT, uow=w.uow, clock=w.clock)
    await w.grant("alice", "c1", "o1")
    await w.grant("alice", "old-prize", "o2")  # named by an award, never catalogued
    await w.grant("alice", "c1", "o3")  # held already: a no-op

    held = await use.my_content("alice", uow=w.uow, shards=w.shards)
    assert [(h.grant.content_id, h.grant.order_id) for h in held] == [
        ("c1", "o1"),
        ("old-prize", "o2"),
    ]
    assert held[0].content is not None
    assert held[0].content.text.title == "第一讲"
    assert held[1].content is None
    assert await use.my_content("bob", uow=w.uow, shards=w.shards) == []
