"""Fast refusals on every backend: under concurrent draws, a top-up and a day rollover,
every chance is drawn once and no draw is refused while a chance is there; and refusals
from a mark make no database transaction."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime

from raffle.bootstrap import Raffle
from raffle.domain.campaign import Campaign
from raffle.domain.quota import NoChances, QuotaPack, Sku
from raffle.service.draw import Draw, DrawResult, draw
from raffle.service.quotas import TopUp, top_up
from tests.integration.raffles import ACTIVITY, WELCOME, Build, SettableClock, campaign
from tests.unit.watched_shards import WatchedShards

USER, SKU, TOP_UP_PACK = "eager", 31, 22
# Three chances, all of them today; the top-up adds five, two of them today.
WELCOME_PACK = QuotaPack(WELCOME, total=3, day=3, month=100)
FIVE = QuotaPack(TOP_UP_PACK, total=5, day=2, month=100)
LAST_MINUTE = datetime(2026, 11, 21, 15, 59, 50, tzinfo=UTC)  # 23:59:50 in Shanghai
NEXT_DAY = datetime(2026, 11, 21, 16, 0, 10, tzinfo=UTC)  # 00:00:10 the next day
WAVE = 50


def _topping_up(now: datetime) -> Campaign:
    base = campaign(pack=WELCOME_PACK, now=now)
    return replace(base, packs=(WELCOME_PACK, FIVE), skus=(Sku(SKU, ACTIVITY, TOP_UP_PACK, 100),))


async def _draw(raffle: Raffle, watched: WatchedShards | None = None) -> DrawResult | None:
    try:
        return await draw(
            Draw(USER, ACTIVITY), catalogue=raffle.catalogue,
            shards=watched.shards if watched else raffle.shards, stock=raffle.stock, rng=raffle.rng,
            clock=raffle.clock, hints=raffle.hints,
        )  # fmt: skip
    except NoChances:
        return None


async def _wave(raffle: Raffle) -> list[DrawResult]:
    drawn = await asyncio.gather(*(_draw(raffle) for _ in range(WAVE)))
    return [d for d in drawn if d is not None]


async def _top_up(raffle: Raffle) -> None:
    await asyncio.sleep(0.005)  # into the middle of the wave
    done = await top_up(
        TopUp(USER, SKU, "pay-1", open_account=True), catalogue=raffle.catalogue, config=raffle.uow,
        shards=raffle.shards, clock=raffle.clock, hints=raffle.hints,
    )  # fmt: skip
    assert done.credited


async def test_every_chance_is_drawn_once_across_a_top_up_and_a_day_rollover(
    build: Build,
) -> None:
    clock = SettableClock(LAST_MINUTE)
    raffle = await build(_topping_up(LAST_MINUTE), clock)
    first = await _wave(raffle)
    assert len(first) == 3  # the welcome pack's, and 47 refused
    during, _ = await asyncio.gather(_wave(raffle), _top_up(raffle))
    after = await _wave(raffle)  # each began after the top-up: refused only without a chance
    assert len(first + during + after) == 5  # the day's 3 and 2, whatever the marks said
    clock.current = NEXT_DAY
    tomorrow = await _wave(raffle)
    assert len(tomorrow) == 3  # the total's last three, the day allowance being 5
    drawn = first + during + after + tomorrow
    assert sorted(d.draw_count for d in drawn) == list(range(1, 9))  # each chance once
    assert len({d.order_id for d in drawn}) == 8
    async with raffle.shards.for_user(USER) as uow:
        account = await uow.quotas.get(USER, ACTIVITY, "2026-11-22", "2026-11")
    assert account is not None
    assert (account.total, account.total_left) == (8, 0)


async def test_a_refusal_after_the_database_refused_makes_no_transaction(build: Build) -> None:
    clock = SettableClock(LAST_MINUTE)
    raffle = await build(_topping_up(LAST_MINUTE), clock)
    for _ in range(3):
        assert await _draw(raffle) is not None
    watched = WatchedShards(raffle.shards)
    assert await _draw(raffle, watched) is None
    assert watched.uses > 0  # the database said no, and the draw marked the account
    watched.uses = 0
    for _ in range(20):
        assert await _draw(raffle, watched) is None
    assert watched.uses == 0
    await _top_up(raffle)
    assert await _draw(raffle, watched) is not None  # seen at once
