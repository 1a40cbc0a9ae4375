"""Flash sales in campaign files: read, each problem located, loaded once (a stored sale is
kept as it is), exported back."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from raffle.adapters.campaign_file import InvalidCampaignFile, parse_campaign
from raffle.adapters.campaign_writer import write_campaign
from raffle.domain.flash_sales import Currency
from raffle.service.campaign_export import export_campaign
from raffle.service.campaigns import load_campaign
from tests.unit.fakes import ConfigStore, FakeUnitOfWork

FILE = """awards:
  - {id: 101, kind: thanks, title: 谢谢参与}
strategies:
  - {id: 1001, fallback: 101, prizes: []}
flash_sales:
  - id: 1111
    name: 限量保温杯
    price: 990
    currency: cents
    original_price: 5900
    stock: 100
    starts_at: 2026-11-11T12:00:00+08:00
    ends_at: 2026-11-11T13:00:00+08:00
    time_zone: Asia/Shanghai
  - {id: 1112, name: 抽奖次数, price: 500, currency: points, stock: 10, per_user: 2,
     starts_at: 2026-11-11T04:00:00Z, ends_at: 2026-11-12T04:00:00Z, sku: 7}
"""


async def test_sales_are_read_loaded_once_and_exported_back() -> None:
    campaign = parse_campaign(FILE, "f")
    cup, chances = campaign.flash_sales
    assert (cup.currency, cup.stock, cup.original_price) == (Currency.CENTS, 100, 5900)
    assert cup.starts_at == datetime(2026, 11, 11, 4, tzinfo=UTC)
    assert (chances.per_user, chances.sku, chances.time_zone) == (2, 7, "UTC")

    store = ConfigStore()
    await load_campaign(campaign, FakeUnitOfWork(store))
    edited = replace(campaign, flash_sales=(replace(cup, stock=1),))
    await load_campaign(edited, FakeUnitOfWork(store))
    assert store.flash_sales[1111].stock == 100  # kept: a sale is never edited

    exported = (await export_campaign(FakeUnitOfWork(store))).campaign
    assert exported.flash_sales == campaign.flash_sales
    assert parse_campaign(write_campaign(exported), "again").flash_sales == campaign.flash_sales


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("stock: 100", "stock: 0", "flash_sales.0.stock"),
        ("id: 1112", "id: 1111", "flash_sales.1.id"),
        ("sku: 7", "sku: 7, award_id: 101", "flash_sales.1.award_id"),
    ],
)
def test_each_problem_of_a_sale_is_located(old: str, new: str, where: str) -> None:
    with pytest.raises(InvalidCampaignFile) as invalid:
        parse_campaign(FILE.replace(old, new), "f")
    assert [p.where for p in invalid.value.problems] == [where]
