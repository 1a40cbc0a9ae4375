"""The prize pool on every database: a prize's card and switch saved and read back equal,
uploaded images stored once by their hash and read back byte for byte, and a switch refused
while its activity runs whereas its card may change."""

from __future__ import annotations

import asyncio
import io
import random
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from PIL import Image
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.prize_images import prepare
from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.activity import Activity, ActivityState
from raffle.domain.awards import Award, AwardKind
from raffle.domain.campaign import Campaign
from raffle.domain.prize_cards import PrizeCard
from raffle.domain.strategy import Fallback, Strategy, StrategyPrize
from raffle.service.campaigns import FrozenOdds, InvalidCampaign, load_campaign
from raffle.service.prize_pool import add_image, change_prize, image

NOW = datetime(2026, 11, 25, 2, tzinfo=UTC)
RACERS = 200  # changes in flight at once, each of its own prize


class Clock:
    def now(self) -> datetime:
        return NOW


def _png(colour: tuple[int, int, int], side: int = 300) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (side, side), colour).save(out, "PNG")
    return out.getvalue()


CARD = PrizeCard(
    level=1,
    level_name="一等奖",
    image="https://cdn.example.com/prizes/iphone.png",
    description="iPhone 17 Pro 256 GB，深空黑",
    win_tips="三日内填写收货地址",
    priority=-3,
    cell=8,
    value_cents=899_900,
)
STRATEGY = Strategy(
    7,
    (
        StrategyPrize(109, Decimal("0.0001"), 10, 0, (("lock", "3"),), enabled=True, card=CARD),
        StrategyPrize(
            105, Decimal("0.2"), 100, 1, (), enabled=False, card=PrizeCard(level=2, cell=1)
        ),
        StrategyPrize(101, Decimal("0.5")),
    ),
    Fallback(101),
)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade(database_url)
    engine = create_engine(database_url)
    async with SqlUnitOfWork(engine) as uow:
        for award in (109, 105, 101):
            await uow.awards.save(Award(award, AwardKind.POINTS, f"奖品 {award}", "5"))
        await uow.strategies.save(STRATEGY)
        window = (NOW - timedelta(days=1), NOW + timedelta(days=9))
        await uow.activities.save(Activity(201, "双十一", 7, *window, state=ActivityState.RUNNING))
        await uow.commit()
    yield engine
    await engine.dispose()


async def test_a_prizes_card_and_switch_read_back_equal(engine: AsyncEngine) -> None:
    async with SqlUnitOfWork(engine) as uow:
        stored = await uow.strategies.get(7)
    assert stored == STRATEGY
    assert stored is not None
    assert stored.prizes[0].card.level_name == "一等奖"
    assert stored.remainder == 1_000_000 - 100 - 500_000  # the disabled one's rate: fallback's


async def test_an_image_is_stored_once_and_read_back_byte_for_byte(engine: AsyncEngine) -> None:
    first = prepare(_png((200, 30, 30)))
    other = prepare(_png((30, 30, 200), side=64))
    for picture in (first, first, other):  # the same bytes twice: one row
        await add_image(picture, SqlUnitOfWork(engine), Clock())
    read = await image(first.id, SqlUnitOfWork(engine))
    assert read == first
    assert (read.width, read.height, read.media_type) == (300, 300, "image/png")
    async with SqlUnitOfWork(engine) as uow:
        assert await uow.prize_images.known([first.id, other.id, "f" * 64]) == {first.id, other.id}


async def test_an_image_past_the_64_kib_of_a_plain_blob_fits(engine: AsyncEngine) -> None:
    noise = Image.frombytes("RGB", (400, 400), random.Random(14).randbytes(400 * 400 * 3))
    out = io.BytesIO()
    noise.save(out, "PNG")
    big = prepare(out.getvalue())
    assert len(big.data) > 65_536  # MariaDB's BLOB would cut it: MEDIUMBLOB does not
    await add_image(big, SqlUnitOfWork(engine), Clock())
    assert (await image(big.id, SqlUnitOfWork(engine))).data == big.data


async def test_the_card_of_a_running_activitys_prize_changes_its_switch_does_not(
    engine: AsyncEngine,
) -> None:
    picture = prepare(_png((10, 160, 10)))
    await add_image(picture, SqlUnitOfWork(engine), Clock())
    changed = await change_prize(
        7, 109, SqlUnitOfWork(engine), card={"image": picture.id, "level_name": "特等奖"}
    )
    assert changed.card.image == picture.id
    assert changed.card.cell == 8
    with pytest.raises(FrozenOdds):
        await change_prize(7, 109, SqlUnitOfWork(engine), card={"level": 2}, enabled=False)
    async with SqlUnitOfWork(engine) as uow:
        stored = await uow.strategies.get(7)
    assert stored is not None
    assert stored.prizes[0].enabled
    assert stored.prizes[0].card.level == 1
    assert stored.prizes[0].card.level_name == "特等奖"
    assert stored.terms() == STRATEGY.terms()  # the odds as published


async def test_hundreds_of_concurrent_changes_of_one_strategy_each_keep_their_field(
    database_url: str,
) -> None:
    await upgrade(database_url)
    engine = create_engine(database_url)
    many = Strategy(
        8,
        tuple(StrategyPrize(1000 + i, Decimal("0.001"), None, i) for i in range(RACERS)),
        Fallback(101),
    )
    try:
        async with SqlUnitOfWork(engine) as uow:
            await uow.strategies.save(many)
            await uow.commit()

        async def describe(i: int) -> None:
            card = {"description": f"奖品 {i}", "priority": i}
            await change_prize(8, 1000 + i, SqlUnitOfWork(engine), card=card)

        await asyncio.gather(*(describe(i) for i in range(RACERS)))
        async with SqlUnitOfWork(engine) as uow:
            stored = await uow.strategies.get(8)
        assert stored is not None
        assert [p.card.description for p in stored.prizes] == [f"奖品 {i}" for i in range(RACERS)]
        assert stored.terms() == many.terms()
    finally:
        await engine.dispose()


async def test_a_campaign_stores_its_images_and_refuses_one_never_uploaded(
    engine: AsyncEngine,
) -> None:
    picture = prepare(_png((90, 20, 160)))
    shown = replace(STRATEGY.prizes[0], card=replace(CARD, image=picture.id))
    strategy = replace(STRATEGY, id=9, prizes=(shown, *STRATEGY.prizes[1:]))
    async with SqlUnitOfWork(engine) as uow:
        awards = tuple((await uow.awards.all()).values())
    orphan = Campaign(awards=awards, strategies=(strategy,))
    with pytest.raises(InvalidCampaign, match="no uploaded image") as refused:
        await load_campaign(orphan, SqlUnitOfWork(engine), clock=Clock())
    assert refused.value.problems[0].path == ("strategies", 0, "prizes", 0, "image")
    async with SqlUnitOfWork(engine) as uow:
        assert await uow.strategies.get(9) is None  # nothing of it stored

    await load_campaign(replace(orphan, images=(picture,)), SqlUnitOfWork(engine), clock=Clock())
    assert (await image(picture.id, SqlUnitOfWork(engine))).data == picture.data
    async with SqlUnitOfWork(engine) as uow:
        assert await uow.strategies.get(9) == strategy
