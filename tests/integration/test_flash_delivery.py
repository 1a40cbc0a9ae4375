"""What flash sales sell, delivered through the outbox, RabbitMQ and PostgreSQL: once per order."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta

from raffle.domain.flash_sales import Answer, Currency, Sale
from raffle.service.flash_delivery import deliver_sold
from raffle.service.points import earn
from raffle.settings import Settings
from tests.integration.delivery_world import (
    ACTIVITY,
    BONUS_PACK,
    SKU,
    WELCOME_PACK,
    delivery_campaign,
    drained,
    fresh_queues,
    pipeline,
)
from tests.integration.test_delivery_pipeline import running

SALE = 1818
LONG = "x" * 32  # the widest user id: its order id is longer than an award record's key


async def test_chances_sold_for_points_are_credited_once_each(
    make_database_url: Callable[[str], Awaitable[str]], rabbitmq_url: str
) -> None:
    await fresh_queues(rabbitmq_url)
    settings = Settings(
        database_url=await make_database_url("postgres"),
        shard_urls=await make_database_url("postgres"),
        shard_tables=4,
        broker_url=rabbitmq_url,
        load_demo=False,
    )
    raffle = await pipeline(settings, delivery_campaign())
    users = [f"p{n}" for n in range(5)] + [LONG]
    try:
        now = raffle.clock.now()
        sale = Sale(
            SALE, "三次抽奖", 100, Currency.POINTS, 10, now, now + timedelta(hours=1), sku=SKU
        )
        await raffle.flash.create(sale)
        for user in users:
            async with raffle.shards.for_user(user) as uow:
                await earn(
                    uow, user_id=user, amount=100, out_business_no="gift", reason="", now=now
                )
                await uow.commit()
        async with running(raffle):
            for user in users:
                path = raffle.flash.gate.path(SALE, user, now)
                assert await raffle.flash.purchase(SALE, user, path, None) is Answer.QUEUED
            await _ordered(raffle, users)
            found = await drained(raffle, len(users), within=30)
            # The order final again (a redelivered purchase) writes no second record.
            for user in users:
                order_id = await raffle.flash.result(SALE, user)
                assert isinstance(order_id, str)
                assert not await deliver_sold(raffle.shards, sale, order_id, user, now)
            assert await drained(raffle, len(users), within=10) == found
        assert (found.completed, found.delivered, found.failed) == (6, 6, 0)
        activity = await raffle.catalogue.activity(ACTIVITY)
        day, month = activity.day(raffle.clock.now()), activity.month(raffle.clock.now())
        for user in users:
            async with raffle.shards.for_user(user) as uow:
                account = await uow.quotas.get(user, ACTIVITY, day, month)
                points = await uow.points.account(user)
            assert account is not None
            assert points is not None
            assert account.total == WELCOME_PACK.total + BONUS_PACK.total, user
            assert points.available == 0, user
    finally:
        await raffle.close()


async def _ordered(raffle: object, users: list[str]) -> None:
    flash = raffle.flash  # type: ignore[attr-defined]
    for _ in range(150):
        results = [await flash.result(SALE, user) for user in users]
        if all(isinstance(r, str) for r in results):
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"not ordered: {results}")
