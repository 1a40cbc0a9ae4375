"""A prize's `claim:` in campaign files: read, refused where wrong, written back the same."""

from __future__ import annotations

from datetime import date

import pytest

from raffle.adapters.campaign_file import InvalidCampaignFile, parse_campaign
from raffle.adapters.campaign_writer import write_campaign
from raffle.domain.prize_claims import ClaimTerms, Validity, ValidityKind

FILE = """\
awards:
  - {id: 1, kind: thanks, title: Thanks}
  - {id: 2, kind: physical, title: Lamp}
  - {id: 3, kind: points, title: Ten, config: "10"}
strategies:
  - id: 10
    fallback: 1
    prizes:
      - award: 2
        rate: 0.1
        claim: {validity: {kind: fixed, first: 2026-12-01, last: 2026-12-31}, conditions: [phone]}
      - {award: 3, rate: 0.1}
"""


def test_a_claim_is_read_into_the_prizes_terms_and_written_back_the_same() -> None:
    campaign = parse_campaign(FILE, "test")
    lamp, points = campaign.strategies[0].prizes
    fixed = Validity(ValidityKind.FIXED, first=date(2026, 12, 1), last=date(2026, 12, 31))
    assert lamp.claim == ClaimTerms(fixed, ("phone",))
    assert not points.claim.any
    text = write_campaign(campaign)
    assert parse_campaign(text, "written") == campaign
    assert "claim: {validity: {kind: fixed, first: '2026-12-01', last: '2026-12-31'}" in text


@pytest.mark.parametrize(
    ("claim", "where"),
    [
        ("{validity: {kind: days, days: 0}}", "claim.validity.days"),
        ("{validity: {kind: days}}", "claim"),
        ("{validity: {kind: weekly}}", "claim.validity.kind"),
        ("{conditions: [password]}", "claim.conditions.0"),
        ("{validity: {kind: fixed, first: 2026-12-02, last: 2026-12-01}}", "claim.last"),
    ],
)
def test_a_claim_that_cannot_hold_is_refused_at_its_line(claim: str, where: str) -> None:
    text = FILE.replace("{validity: {kind: fixed, first: 2026-12-01, last: 2026-12-31}, "
                        "conditions: [phone]}", claim)  # fmt: skip
    with pytest.raises(InvalidCampaignFile) as refused:
        parse_campaign(text, "test")
    (problem,) = refused.value.problems
    assert problem.line == 11, problem
    assert problem.where.endswith(where), problem


def test_terms_on_a_prize_nobody_claims_are_a_problem_of_the_campaign() -> None:
    text = FILE.replace("{award: 3, rate: 0.1}", "{award: 3, rate: 0.1, claim: {conditions: [sn]}}")
    with pytest.raises(InvalidCampaignFile) as refused:
        parse_campaign(text, "test")
    (problem,) = refused.value.problems
    assert (problem.line, problem.where) == (12, "strategies.0.prizes.1.claim")
    assert "only coupon and physical prizes" in problem.message
