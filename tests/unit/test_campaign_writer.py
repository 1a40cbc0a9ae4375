"""Campaign files written from domain objects read back to the same campaign."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from raffle.adapters.campaign_file import parse_campaign, read_campaign
from raffle.adapters.campaign_writer import campaign_document, write_campaign
from raffle.domain.campaign import Campaign

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.yaml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_reads_back_to_the_same_campaign(path: Path) -> None:
    campaign = read_campaign(path)
    text = write_campaign(campaign)
    assert parse_campaign(text, "written") == campaign
    assert write_campaign(parse_campaign(text, "written")) == text


def test_rates_are_written_as_exact_decimals_never_floats_or_exponents() -> None:
    text = """
awards:
  - {id: 1, kind: thanks, title: Thanks}
  - {id: 2, kind: points, title: Ten, config: "10"}
strategies:
  - id: 10
    fallback: 1
    prizes:
      - {award: 2, rate: 0.000001, stock: 1, rules: {lock: 3}}
"""
    campaign = parse_campaign(text, "test")
    written = write_campaign(campaign)
    assert "rate: 0.000001" in written
    assert parse_campaign(written, "written").strategies[0].prizes[0].rate == Decimal("0.000001")


def test_codes_that_look_like_numbers_stay_text() -> None:
    text = 'code_pools:\n  coupon-5: ["0071", "12", "A-1"]\n'
    written = write_campaign(parse_campaign(text, "test"))
    assert yaml.safe_load(written)["code_pools"]["coupon-5"] == ["0071", "12", "A-1"]


def test_an_empty_campaign_is_an_empty_file_that_loads() -> None:
    written = write_campaign(Campaign(awards=(), strategies=()), notes=["nothing stored"])
    assert written == "# nothing stored\n{}\n"
    assert parse_campaign(written, "written") == Campaign(awards=(), strategies=())
    assert campaign_document(Campaign(awards=(), strategies=())) == {}
