from decimal import Decimal
from pathlib import Path

import pytest

from raffle.adapters.campaign_file import read_campaign
from raffle.domain.awards import Award, AwardKind
from raffle.domain.campaign import Campaign
from raffle.domain.fulfilment import CodePool
from raffle.domain.rules import DrawContext
from raffle.domain.strategy import Fallback, Strategy, StrategyPrize
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


def _coupon_campaign(stock: int | None, codes: int, *, fallback_coupon: bool = False) -> Campaign:
    thanks, coupon = Award(1, AwardKind.THANKS, "thanks"), Award(2, AwardKind.COUPON, "5 off", "c5")
    if fallback_coupon:  # the luck prize, handed out with unlimited stock
        strategy = Strategy(10, (StrategyPrize(1, Decimal("0.5")),), Fallback(2))
    else:
        strategy = Strategy(10, (StrategyPrize(2, Decimal("0.5"), stock),), Fallback(1))
    pool = CodePool("c5", tuple(f"C5-{n}" for n in range(codes)))
    return Campaign((thanks, coupon), (strategy,), code_pools=(pool,))


async def test_a_coupon_prize_may_not_have_more_stock_than_its_pool_has_codes() -> None:
    uow = FakeUnitOfWork()
    with pytest.raises(InvalidCampaign, match=r"coupon stock 4 .* exceeds the pool's 3") as error:
        await load_campaign(_coupon_campaign(4, 3), uow)
    assert error.value.problems[0].path == ("strategies", 0, "prizes", 0, "stock")
    assert uow.commits == 0
    assert uow.committed.codes == {}

    loaded = await load_campaign(_coupon_campaign(3, 3), uow)
    assert loaded.codes == 3
    assert sorted(uow.committed.codes["c5"]) == ["C5-0", "C5-1", "C5-2"]


async def test_codes_stored_before_count_towards_the_pool() -> None:
    uow = FakeUnitOfWork()
    uow.committed.codes["c5"] = dict.fromkeys(["old-1", "old-2"])
    loaded = await load_campaign(_coupon_campaign(5, 3), uow)
    assert loaded.codes == 3
    again = await load_campaign(_coupon_campaign(5, 3), uow)
    assert again.codes == 0  # reloading the file adds nothing


@pytest.mark.parametrize(
    ("campaign", "path"),
    [
        (_coupon_campaign(None, 3), ("strategies", 0, "prizes", 0, "stock")),
        (_coupon_campaign(1, 3, fallback_coupon=True), ("strategies", 0, "fallback")),
    ],
    ids=["unlimited stock", "the fallback"],
)
async def test_a_coupon_with_unlimited_stock_is_refused(
    campaign: Campaign, path: tuple[str | int, ...]
) -> None:
    with pytest.raises(InvalidCampaign, match="needs a stock") as error:
        await load_campaign(campaign, FakeUnitOfWork())
    assert [p.path for p in error.value.problems][-1] == path


def _sharing(strategy_id: int, stock: int, codes: tuple[str, ...] = ()) -> Campaign:
    """A file of one strategy whose coupon prize draws from pool c5 (the file adds `codes`)."""
    thanks, coupon = Award(1, AwardKind.THANKS, "thanks"), Award(2, AwardKind.COUPON, "5 off", "c5")
    prizes = (StrategyPrize(2, Decimal("0.5"), stock),)
    pools = (CodePool("c5", codes),) if codes else ()
    return Campaign(
        (thanks, coupon), (Strategy(strategy_id, prizes, Fallback(1)),), code_pools=pools
    )


async def test_stored_strategies_drawing_from_the_pool_count_with_the_file() -> None:
    uow = FakeUnitOfWork()
    await load_campaign(_sharing(10, 2, ("C5-0", "C5-1", "C5-2")), uow)
    with pytest.raises(InvalidCampaign, match=r"coupon stock 4 .*stored strategies 10 among") as e:
        await load_campaign(_sharing(11, 2), uow)  # another file, the same pool of 3 codes
    assert e.value.code == "invalid_campaign"
    assert e.value.problems[0].path == ("strategies", 0, "prizes", 0, "stock")
    assert set(uow.committed.strategies) == {10}  # nothing of the refused file stored
    assert uow.committed.loads == 1  # the refused load's turn is not counted

    await load_campaign(_sharing(11, 1), uow)  # 2 + 1 fit
    await load_campaign(_sharing(10, 2), uow)  # a stored strategy reloaded replaces itself
    with pytest.raises(InvalidCampaign, match=r"coupon stock 4 "):
        await load_campaign(_sharing(10, 3), uow)
    assert uow.committed.strategies[10].prizes[0].stock == 2


async def test_codes_handed_out_count_as_each_went_to_a_unit_of_stock_won() -> None:
    uow = FakeUnitOfWork()
    await load_campaign(_sharing(10, 1, ("C5-0", "C5-1")), uow)
    uow.committed.codes["c5"]["C5-0"] = ("o1", "u1")  # strategy 10's prize won and delivered
    await load_campaign(_sharing(11, 1), uow)  # the free code is 11's
    with pytest.raises(InvalidCampaign, match=r"coupon stock 3 .* exceeds the pool's 2 codes"):
        await load_campaign(_sharing(12, 1), uow)


async def test_an_award_moved_to_a_pool_too_small_for_its_stored_prizes_is_refused() -> None:
    uow = FakeUnitOfWork()
    await load_campaign(_sharing(10, 2, ("C5-0", "C5-1")), uow)
    moved = Campaign(
        (Award(2, AwardKind.COUPON, "5 off", "c6"),), (), code_pools=(CodePool("c6", ("C6-0",)),)
    )
    with pytest.raises(InvalidCampaign, match=r"coupon stock 2 .*'c6', stored strategies 10") as e:
        await load_campaign(moved, uow)
    assert e.value.problems[0].path == ("awards", 0, "config")
    assert uow.committed.awards[2].config == "c5"
    assert "c6" not in uow.committed.codes
