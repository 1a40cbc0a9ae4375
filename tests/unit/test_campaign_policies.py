"""An activity's `policies:` and `person_caps:` in campaign files: read, refused by line, stored
with the campaign (a file's activity without them has none), exported back."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from raffle.adapters.campaign_file import InvalidCampaignFile, parse_campaign, read_campaign
from raffle.adapters.campaign_writer import write_campaign
from raffle.domain.activity import ActivityState
from raffle.domain.policies import Limit, Participation, Period, PersonCaps, Policy
from raffle.service.campaign_export import export_campaign
from raffle.service.campaigns import FrozenOdds, load_campaign
from tests.unit.fakes import ConfigStore, FakeUnitOfWork

EXAMPLE = Path(__file__).parents[2] / "examples" / "members-week.yaml"
TEXT = EXAMPLE.read_text(encoding="utf-8")


def test_the_example_reads_its_policies_by_priority_and_its_caps() -> None:
    [participation] = read_campaign(EXAMPLE).participations
    assert participation == Participation(
        1,
        (
            Policy(1, 10, "members", frozenset({3, 4, 5}), 0, Limit(3, Period.WEEK)),
            Policy(2, 20, None, frozenset(), 10, Limit(1, Period.DAY), Limit(1, Period.MONTH)),
        ),
        PersonCaps(Limit(2, Period.MONTH), once_per_prize=True),
    )


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        ("period: week", "period: fortnight", 35, "Input should be"),
        ("points_cost: 10", "points_cost: -1", 38, "greater than or equal to 0"),
        ("      - id: 2\n", "      - id: 1\n", 30, "policy ids are unique"),
        ("once_per_prize: true", "once_per_prize: true\n      every: 3", 44, "Extra inputs"),
    ],
)
def test_a_bad_policy_refuses_the_file_with_its_line(
    old: str, new: str, line: int, message: str
) -> None:
    assert old in TEXT
    with pytest.raises(InvalidCampaignFile) as error:
        parse_campaign(TEXT.replace(old, new), "test")
    problems = error.value.problems
    assert any(p.line == line and message in p.message for p in problems), problems


async def test_loaded_policies_export_back_and_a_file_without_them_removes_them() -> None:
    campaign = read_campaign(EXAMPLE)
    config = ConfigStore()
    await load_campaign(campaign, FakeUnitOfWork(config))

    exported = (await export_campaign(FakeUnitOfWork(config))).campaign

    assert exported.participations == campaign.participations
    assert parse_campaign(write_campaign(exported), "exported") == exported
    bare = replace(campaign, participations=())
    await load_campaign(bare, FakeUnitOfWork(config))
    assert config.participation[1] == Participation(1)


async def test_a_running_activitys_caps_are_fixed_but_its_policies_may_change() -> None:
    campaign = read_campaign(EXAMPLE)
    config = ConfigStore()
    await load_campaign(campaign, FakeUnitOfWork(config))
    config.activities[1] = replace(config.activities[1], state=ActivityState.RUNNING)
    [participation] = campaign.participations

    fewer = replace(participation, policies=participation.policies[:1])
    await load_campaign(replace(campaign, participations=(fewer,)), FakeUnitOfWork(config))
    assert config.participation[1] == fewer
    uncapped = replace(participation, caps=PersonCaps())
    with pytest.raises(FrozenOdds):
        await load_campaign(replace(campaign, participations=(uncapped,)), FakeUnitOfWork(config))
    assert config.participation[1] == fewer
