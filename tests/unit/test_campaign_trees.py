"""Decision trees in campaign files: read, problems reported by line with their reason, a
file refused whole, loaded as new versions only when changed, and exported back."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from raffle.adapters.campaign_file import InvalidCampaignFile, parse_campaign, read_campaign
from raffle.adapters.campaign_writer import write_campaign
from raffle.domain.activity import ActivityState
from raffle.domain.route_trees import Leaf, Line, Op
from raffle.service.campaign_export import export_campaign
from raffle.service.campaigns import InvalidCampaign, load_campaign
from tests.unit.fakes import ConfigStore, FakeUnitOfWork

EXAMPLE = Path(__file__).parents[2] / "examples" / "route-trees.yaml"
NOW = datetime(2026, 11, 24, 12, tzinfo=UTC)


class Clock:
    def now(self) -> datetime:
        return NOW


def _text(old: str, new: str) -> str:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert old in text
    return text.replace(old, new)


def test_a_tree_is_read_with_dates_and_numbers_as_the_document_has_them() -> None:
    text = _text("field: age ", "field: birth_date ").replace(
        '{op: "<", value: 18,', '{op: "<", value: 2008-11-24,'
    )
    text = text.replace("value: [north, east]", "value: [north, 2.5]").replace(
        "field: region", "field: attrs.zone"
    )
    tree = parse_campaign(text, "t").trees[0]
    assert tree.nodes[0].lines[0] == Line(Op.LT, "general", datetime(2008, 11, 24).date())
    assert tree.nodes[2].lines[0].value == ("north", 2.5)
    assert parse_campaign(write_campaign(parse_campaign(text, "t")), "w").trees == (tree,)


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        ('{op: "<", value: 18,', '{op: "<", value: old,', 29, "(value_type)"),
        ("{op: default, to: general}", "{op: default, to: nowhere}", 40, "(dangling_line)"),
        ("{op: default, to: general}", "{op: default, to: by_vip}", 40, "(cycle)"),
        ("          - {op: default, to: by_vip}\n", "", 28, "(missing_default)"),
        (
            "{id: north, activity: 203}",
            "{id: north, activity: 203, colour: red}",
            44,
            "(malformed)",
        ),
        ("{op: in,", "{op: within,", 39, "(malformed)"),
        (
            "activities:\n",
            "activities:\n  - {id: 209, name: old, strategy: 1, begin_at: "
            '"2026-01-01T00:00:00+08:00", end_at: "2026-02-01T00:00:00+08:00", state: closed}\n'
            "# one more\n",
            46,
            "",
        ),
    ],
)
def test_each_problem_of_a_tree_is_reported_at_its_line(
    old: str, new: str, line: int, message: str
) -> None:
    text = _text(old, new)
    if "state: closed" in new:  # a leaf to a closed activity of the file
        text = text.replace("{id: north, activity: 203}", "{id: north, activity: 209}")
        message = "(activity_cannot_run)"
    with pytest.raises(InvalidCampaignFile) as refused:
        parse_campaign(text, "f")
    assert [(p.line, message in p.message) for p in refused.value.problems] == [(line, True)]


async def test_trees_load_as_a_new_version_only_when_changed_and_export_back() -> None:
    store = ConfigStore()
    campaign = read_campaign(EXAMPLE)
    loaded = await load_campaign(campaign, FakeUnitOfWork(store), clock=Clock())
    assert loaded.trees == 1
    await load_campaign(campaign, FakeUnitOfWork(store), clock=Clock())  # unchanged
    assert [v.version for v in store.route_trees["newcomers"] if v] == [1]
    assert [v.saved_by for v in store.route_trees["newcomers"] if v] == ["campaign"]
    changed = replace(campaign, trees=(replace(campaign.trees[0], description="二"),))
    await load_campaign(changed, FakeUnitOfWork(store), clock=Clock())
    assert len(store.route_trees["newcomers"]) == 2
    exported = (await export_campaign(FakeUnitOfWork(store))).campaign
    assert exported.trees == changed.trees
    assert parse_campaign(write_campaign(exported), "exported").trees == changed.trees


async def test_a_tree_to_an_activity_neither_in_the_file_nor_stored_refuses_the_whole_load() -> (
    None
):
    store = ConfigStore()
    campaign = read_campaign(EXAMPLE)
    leaves = (*campaign.trees[0].leaves[:2], Leaf("north", 777))
    lost = replace(campaign, trees=(replace(campaign.trees[0], leaves=leaves),))
    assert lost.problems() == []  # 777 may be stored: the load looks
    with pytest.raises(InvalidCampaign) as refused:
        await load_campaign(lost, FakeUnitOfWork(store), clock=Clock())
    assert [(p.path, "(unknown_activity)" in p.message) for p in refused.value.problems] == [
        (("trees", 0, "leaves", 2, "activity"), True)
    ]
    assert (store.route_trees, store.activities) == ({}, {})
    await load_campaign(campaign, FakeUnitOfWork(store), clock=Clock())
    store.activities[203] = replace(store.activities[203], state=ActivityState.CLOSED)
    with pytest.raises(InvalidCampaign):  # closed since: a stored activity as it is now
        await load_campaign(lost, FakeUnitOfWork(store), clock=Clock())
