"""Sign-in and exchange under load on real servers: one rebate a day, no negative balance."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime

from raffle.bootstrap import Raffle
from raffle.domain.campaign import Campaign
from raffle.domain.points import InsufficientPoints
from raffle.domain.quota import Sku
from raffle.domain.rebates import RebateRule
from raffle.service.points import Exchange, earn, exchange
from raffle.service.rebates import SignIn, sign_in, sign_ins
from tests.integration.raffles import ACTIVITY, WELCOME, Build, SettableClock, campaign

SKU, PRICE, STOCK, POINTS = 31, 100, 1000, 10  # the SKU sells the 20-chance welcome pack


def rebating(now: datetime | None = None) -> Campaign:
    base = campaign(now=now)
    return replace(
        base,
        skus=(Sku(SKU, ACTIVITY, WELCOME, STOCK, PRICE),),
        rebates=(RebateRule(ACTIVITY, "sign_in", SKU, POINTS),),
    )


async def _sign_in(raffle: Raffle, user: str) -> SignIn:
    return await sign_in(
        user, ACTIVITY, catalogue=raffle.catalogue, config=raffle.uow, shards=raffle.shards,
        clock=raffle.clock, calendar=raffle.calendar, hints=raffle.hints,
    )  # fmt: skip


async def _stock_left(raffle: Raffle) -> int:
    async with raffle.uow() as uow:
        return await uow.skus.stock_left(SKU)


async def _state(raffle: Raffle, user: str) -> tuple[int, int, int, int]:
    """Available points, points orders, chances ever credited, rebate orders (of this month)."""
    async with raffle.shards.for_user(user) as uow:
        points = await uow.points.account(user)
        orders = await uow.points.history(user, None, 1000)
        account = await uow.quotas.get(user, ACTIVITY, "2000-01-01", "2000-01")
        rebates = await uow.rebates.keys(user, ACTIVITY, "sign_in", "0000", "9999")
    return (
        points.available if points else 0,
        len(orders),
        account.total if account else 0,
        len(rebates),
    )


async def test_a_hundred_sign_ins_at_once_rebate_once(build: Build) -> None:
    # At a fixed noon in the activity's zone: on the real clock a burst across its midnight
    # signs in on two days, and rebates twice.
    clock = SettableClock(datetime(2026, 11, 21, 4, 0, tzinfo=UTC))  # 12:00 +8
    raffle = await build(rebating(now=clock.current), clock)
    results = await asyncio.gather(*(_sign_in(raffle, "eager") for _ in range(100)))
    assert sum(r.granted for r in results) == 1
    assert len({r.order.order_id for r in results}) == 1
    assert await _state(raffle, "eager") == (POINTS, 1, 20 + 20, 1)  # welcome + rebate
    assert await _stock_left(raffle) == STOCK - 1  # every repeat gave its unit back
    calendar = await sign_ins(
        "eager", ACTIVITY, None, catalogue=raffle.catalogue, clock=raffle.clock,
        calendar=raffle.calendar,
    )  # fmt: skip
    assert (calendar.signed_today, calendar.streak, len(calendar.days)) == (True, 1, 1)


async def test_sign_ins_just_before_and_after_midnight_rebate_twice(build: Build) -> None:
    clock = SettableClock(datetime(2026, 11, 21, 15, 59, 59, 900_000, tzinfo=UTC))  # 23:59:59.9 +8
    raffle = await build(rebating(now=clock.current), clock)
    before = await asyncio.gather(*(_sign_in(raffle, "owl") for _ in range(20)))
    clock.current = datetime(2026, 11, 21, 16, 0, 0, 100_000, tzinfo=UTC)  # 00:00:00.1 next day
    after = await asyncio.gather(*(_sign_in(raffle, "owl") for _ in range(20)))
    assert (sum(r.granted for r in before), sum(r.granted for r in after)) == (1, 1)
    assert {r.order.business_key for r in before + after} == {"2026-11-21", "2026-11-22"}
    assert await _state(raffle, "owl") == (2 * POINTS, 2, 20 + 40, 2)
    assert max(r.streak for r in after) == 2


async def test_fifty_exchanges_at_once_on_a_balance_for_three_exchange_three(
    build: Build,
) -> None:
    raffle = await build(rebating(), None)
    async with raffle.shards.for_user("buyer") as uow:
        await earn(
            uow, user_id="buyer", amount=3 * PRICE + 99, out_business_no="gift",
            reason="test", now=raffle.clock.now(),
        )  # fmt: skip
        await uow.commit()

    async def one(n: int) -> str:
        try:
            done = await exchange(
                Exchange("buyer", SKU, f"key-{n}"), catalogue=raffle.catalogue,
                config=raffle.uow, shards=raffle.shards, clock=raffle.clock,
                hints=raffle.hints,
            )  # fmt: skip
        except InsufficientPoints:
            return "insufficient"
        return "exchanged" if done.exchanged else "replayed"

    results = Counter(await asyncio.gather(*(one(n) for n in range(50))))
    assert results == Counter(exchanged=3, insufficient=47)
    available, orders, credited, _ = await _state(raffle, "buyer")
    assert available == 99  # never below zero: 3 x 100 of 399
    assert orders == 4  # the gift and three spends: a refused exchange leaves no order
    assert credited == 20 + 3 * 20  # the welcome pack and three packs
    assert await _stock_left(raffle) == STOCK - 3
    async with raffle.shards.for_user("buyer") as uow:
        assert (await uow.top_ups.exists("buyer", "gift")) is False


async def test_one_exchange_key_sent_twenty_times_at_once_exchanges_once(build: Build) -> None:
    raffle = await build(rebating(), None)
    async with raffle.shards.for_user("twin") as uow:
        await earn(
            uow, user_id="twin", amount=10 * PRICE, out_business_no="gift", reason="test",
            now=raffle.clock.now(),
        )  # fmt: skip
        await uow.commit()
    cmd = Exchange("twin", SKU, "same-key")
    results = await asyncio.gather(
        *(
            exchange(
                cmd,
                catalogue=raffle.catalogue,
                config=raffle.uow,
                shards=raffle.shards,
                clock=raffle.clock,
                hints=raffle.hints,
            )
            for _ in range(20)
        )
    )
    assert sum(r.exchanged for r in results) == 1
    assert len({r.order.order_id for r in results}) == 1
    assert (await _state(raffle, "twin"))[:3] == (9 * PRICE, 2, 20 + 20)
    assert await _stock_left(raffle) == STOCK - 1


async def test_the_calendar_survives_redis_losing_its_data(build: Build) -> None:
    clock = SettableClock(datetime(2026, 11, 29, 4, tzinfo=UTC))
    raffle = await build(rebating(now=clock.current), clock)
    for day in (29, 30):
        clock.current = datetime(2026, 11, day, 4, tzinfo=UTC)
        await _sign_in(raffle, "steady")
    clock.current = datetime(2026, 12, 1, 4, tzinfo=UTC)
    await _sign_in(raffle, "steady")
    if raffle.redis is not None:
        await raffle.redis.flushdb()  # every bitmap gone; the rebate orders remain
    found = await sign_ins(
        "steady", ACTIVITY, "2026-11", catalogue=raffle.catalogue, clock=raffle.clock,
        calendar=raffle.calendar,
    )  # fmt: skip
    assert (found.days, found.signed_today, found.streak) == ([29, 30], True, 3)
    if raffle.redis is not None:
        assert await raffle.redis.exists("raffle:sign-in:1:steady:2026-11") == 1  # rebuilt
