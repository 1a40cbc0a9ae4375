"""Rebate rules in campaign files: parsed, and checked against the file's activities and SKUs."""

from __future__ import annotations

import pytest

from raffle.adapters.campaign_file import InvalidCampaignFile, parse_campaign
from raffle.domain.rebates import RebateRule
from raffle.service.campaigns import load_campaign
from tests.unit.fakes import FakeUnitOfWork

BASE = """\
awards: [{id: 1, kind: thanks, title: thanks}]
strategies: [{id: 10, fallback: 1, prizes: []}]
packs: [{id: 5, total: 1, day: 1, month: 1}]
activities:
  - {id: 7, name: a, strategy: 10, begin_at: 2026-01-01T00:00:00+08:00,
     end_at: 2027-01-01T00:00:00+08:00}
  - {id: 8, name: b, strategy: 10, begin_at: 2026-01-01T00:00:00+08:00,
     end_at: 2027-01-01T00:00:00+08:00}
skus: [{sku: 70, activity: 7, pack: 5, stock: 10}, {sku: 80, activity: 8, pack: 5, stock: 10}]
"""


async def test_rebates_are_read_and_stored() -> None:
    text = BASE + (
        "rebates:\n"
        "  - {activity: 7, behaviour: sign_in, sku: 70, points: 10}\n"
        "  - {activity: 7, behaviour: share, points: 5, enabled: false}\n"
    )
    campaign = parse_campaign(text, "test")
    assert campaign.rebates == (
        RebateRule(7, "sign_in", 70, 10),
        RebateRule(7, "share", None, 5, enabled=False),
    )
    uow = FakeUnitOfWork()
    loaded = await load_campaign(campaign, uow)
    assert loaded.rebates == 2
    assert set(uow.committed.rebate_rules) == {(7, "sign_in"), (7, "share")}


@pytest.mark.parametrize(
    ("rebate", "where", "message"),
    [
        ("{activity: 7, behaviour: sign_in}", "rebates.0.behaviour", "sku, points or both"),
        ("{activity: 9, behaviour: sign_in, points: 1}", "rebates.0.activity", "activity 9"),
        ("{activity: 7, behaviour: sign_in, sku: 99}", "rebates.0.sku", "sku 99"),
        ("{activity: 7, behaviour: sign_in, sku: 80}", "rebates.0.sku", "another activity"),
        ("{activity: 7, behaviour: Sign In, points: 1}", "rebates.0.behaviour", "lower-case"),
    ],
)
def test_a_bad_rebate_is_reported_with_its_line(rebate: str, where: str, message: str) -> None:
    with pytest.raises(InvalidCampaignFile) as caught:
        parse_campaign(BASE + f"rebates:\n  - {rebate}\n", "test")
    [problem] = caught.value.problems
    assert (problem.line, problem.where) == (11, where)
    assert message in problem.message


def test_one_rule_per_activity_and_behaviour() -> None:
    text = BASE + (
        "rebates:\n"
        "  - {activity: 7, behaviour: share, points: 1}\n"
        "  - {activity: 7, behaviour: share, points: 2}\n"
    )
    with pytest.raises(InvalidCampaignFile, match="two rebates for 'share'"):
        parse_campaign(text, "test")
