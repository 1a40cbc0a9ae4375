"""Paid content in campaign files: read, each problem reported by its line, new content
created in the file's state, stored content given the file's text and keeping its state,
exported back; files from before content (a content award naming any id) load as they did."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from raffle.adapters.campaign_file import InvalidCampaignFile, parse_campaign
from raffle.adapters.campaign_writer import write_campaign
from raffle.domain.content import ContentState
from raffle.service import content as use
from raffle.service.campaign_export import export_campaign
from raffle.service.campaigns import InvalidCampaign, load_campaign
from tests.unit.fakes import ConfigStore, FakeClock, FakeUnitOfWork

NOW = datetime(2026, 11, 25, 9, tzinfo=UTC)
OLD = """awards:
  - {id: 101, kind: thanks, title: 谢谢参与}
  - {id: 102, kind: content, title: 课程, config: "某门 课程"}
strategies:
  - {id: 1001, fallback: 101, prizes: [{award: 102, rate: 0.5, stock: 10}]}
"""
FILE = (
    OLD.replace('config: "某门 课程"', "config: course-1")
    + """content:
  - id: course-1
    title: 抽奖系统 · 第一讲
    summary: 奖品、概率与库存
    cover: https://example.com/c.png
    price_cents: 990
    state: on_sale
    preview: 本讲介绍策略。
    body: |
      ## 概率

      **精确**的概率。
  - {id: notes, title: 讲义}
"""
)


def uow_of(store: ConfigStore) -> FakeUnitOfWork:
    return FakeUnitOfWork(store)


async def test_content_is_read_loaded_in_its_state_and_exported_back() -> None:
    campaign = parse_campaign(FILE, "f")
    store, clock = ConfigStore(), FakeClock(NOW)
    loaded = await load_campaign(campaign, FakeUnitOfWork(store), clock=clock)

    assert loaded.content == 2
    course, notes = await use.listed(lambda: uow_of(store))
    assert (course.id, course.state, course.text.price_cents) == ("course-1", "on_sale", 990)
    assert course.text.body == "## 概率\n\n**精确**的概率。\n"
    assert (notes.id, notes.state, notes.text.summary) == ("notes", ContentState.DRAFT, "")
    exported = (await export_campaign(FakeUnitOfWork(store))).campaign
    assert exported.content == campaign.content
    assert parse_campaign(write_campaign(exported), "w").content == campaign.content


async def test_stored_content_takes_the_files_text_and_keeps_its_state() -> None:
    store, clock = ConfigStore(), FakeClock(NOW)
    await load_campaign(parse_campaign(FILE, "f"), FakeUnitOfWork(store), clock=clock)
    await use.move("course-1", ContentState.OFF_SALE, uow=lambda: uow_of(store), clock=clock)
    before = await use.stored("notes", lambda: uow_of(store))

    clock.current = NOW + timedelta(hours=1)
    changed = FILE.replace("price_cents: 990", "price_cents: 1200")
    await load_campaign(parse_campaign(changed, "f"), FakeUnitOfWork(store), clock=clock)

    course = await use.stored("course-1", lambda: uow_of(store))
    assert (course.state, course.text.price_cents) == (ContentState.OFF_SALE, 1200)
    assert course.updated_at == NOW + timedelta(hours=1)
    assert await use.stored("notes", lambda: uow_of(store)) == before  # unchanged: untouched


async def test_content_on_sale_is_not_made_free_by_a_file() -> None:
    store, clock = ConfigStore(), FakeClock(NOW)
    await load_campaign(parse_campaign(FILE, "f"), FakeUnitOfWork(store), clock=clock)
    free = parse_campaign(FILE.replace("price_cents: 990\n    state: on_sale", ""), "f")

    with pytest.raises(InvalidCampaign, match="price_cents"):
        await load_campaign(free, FakeUnitOfWork(store), clock=clock)
    course = await use.stored("course-1", lambda: uow_of(store))
    assert course.text.price_cents == 990


@pytest.mark.parametrize(
    ("old", "new", "line", "where"),
    [
        ("  - {id: notes, title: 讲义}", "  - {id: 'a b', title: 讲义}", 18, "content.1.id"),
        ("  - {id: notes, title: 讲义}", "  - {id: course-1, title: 讲义}", 18, "content.1.id"),
        ("    price_cents: 990\n", "", 7, "content.0.price_cents"),
        ("cover: https://", "cover: http://", 10, "content.0.cover"),
        ("    state: on_sale", "    state: sold", 12, "content.0.state"),
        ("  - {id: notes, title: 讲义}", "  - {id: notes}", 18, "content.1.title"),
    ],
)
def test_a_problem_of_an_item_is_reported_at_its_line(
    old: str, new: str, line: int, where: str
) -> None:
    assert old in FILE
    with pytest.raises(InvalidCampaignFile) as refused:
        parse_campaign(FILE.replace(old, new), "f")
    assert [(p.line, p.where) for p in refused.value.problems] == [(line, where)]


async def test_a_file_from_before_content_loads_as_it_did() -> None:
    store = ConfigStore()
    campaign = parse_campaign(OLD, "old")
    loaded = await load_campaign(campaign, FakeUnitOfWork(store))  # no clock, no content

    assert (loaded.awards, loaded.content) == (2, 0)
    assert store.awards[102].config == "某门 课程"
    assert store.content == {}
    assert "content" not in write_campaign(replace(campaign, awards=()))
