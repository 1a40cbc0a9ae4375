from pathlib import Path

import pytest

from raffle.adapters.campaign_file import read_campaign
from raffle.domain.campaign import Campaign
from raffle.domain.rules import DrawContext
from raffle.service.campaigns import InvalidCampaign, UnknownStrategy, engine_for, load_campaign
from tests.unit.builders import awards, strategy
from tests.unit.fakes import FakeUnitOfWork

EXAMPLE = Path(__file__).parents[2] / "examples" / "big-market.yaml"


async def test_loading_stores_every_award_and_strategy_in_one_commit() -> None:
    campaign = read_campaign(EXAMPLE)
    uow = FakeUnitOfWork()
    loaded = await load_campaign(campaign, uow)
    assert (loaded.awards, loaded.strategies, loaded.activities, loaded.skus) == (10, 1, 1, 3)
    assert uow.commits == 1
    assert uow.committed.strategies[100006] == campaign.strategies[0]
    assert set(uow.committed.awards) == set(range(100, 110))
    assert uow.committed.sku_left[9011] == 100_000


async def test_an_invalid_campaign_stores_nothing() -> None:
    bad = Campaign(tuple(awards(2).values()), (strategy({2: "0.5", 3: "0.1"}),))
    uow = FakeUnitOfWork()
    with pytest.raises(InvalidCampaign, match="award 3 is not a known award") as error:
        await load_campaign(bad, uow)
    assert error.value.problems[0].path == ("strategies", 0, "prizes", 1)
    assert uow.commits == 0
    assert uow.committed.strategies == {}


async def test_a_stored_strategy_draws_like_the_file() -> None:
    campaign = read_campaign(EXAMPLE)
    uow = FakeUnitOfWork()
    await load_campaign(campaign, uow)
    engine = await engine_for(100006, uow)
    assert engine.odds(DrawContext("u", 3)) == campaign.engines()[100006].odds(DrawContext("u", 3))
    with pytest.raises(UnknownStrategy):
        await engine_for(42, uow)
