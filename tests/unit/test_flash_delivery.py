"""What a flash sale sold, through the delivery pipeline on fakes: once per order."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from raffle.domain.awards import AwardKind
from raffle.domain.delivery import WON
from raffle.domain.draws import OutboxMessage, WinState
from raffle.domain.flash_gate import solve
from raffle.domain.flash_sales import (
    PURCHASED,
    RECORD_ID_MAX,
    SOLD_AWARD,
    SOLD_CHANCES,
    Answer,
    Currency,
    paid_for,
    paying_for,
    record_id,
)
from raffle.service.deliverers import DeliveryContext
from raffle.service.delivery import deliver
from raffle.service.flash_delivery import deliver_sold
from raffle.service.flash_sales import FlashSales
from raffle.service.points import earn
from tests.unit.flash_fakes import START, flash, sale
from tests.unit.usecase_world import ACTIVITY, PRIZE, SKU, WELCOME_PACK, World, world


def _context(w: World) -> DeliveryContext:
    return DeliveryContext(w.catalogue, w.uow, w.shards, w.clock, w.hints)


def _sent(w: World) -> list[OutboxMessage]:
    return [m for m in w.shards.store.outbox if m.topic == WON]


async def test_a_skus_chances_are_credited_once_however_often_the_order_is_final() -> None:
    w = world(rate="0")
    sold = replace(sale(), sku=SKU)
    assert await deliver_sold(w.shards, sold, "fs1111-alice-1", "alice", START) is True
    assert await deliver_sold(w.shards, sold, "fs1111-alice-1", "alice", START) is False
    (message,) = _sent(w)
    assert w.shards.store.wins["fs1111-alice-1"].rule == SOLD_CHANCES
    assert await deliver(message, _context(w)) is True
    assert await deliver(message, _context(w)) is False
    total = w.shards.store.accounts["alice", ACTIVITY][0]
    assert total == WELCOME_PACK.total + 5  # the account opened with its welcome pack first
    assert w.shards.store.wins["fs1111-alice-1"].state is WinState.COMPLETED


async def test_a_prize_kind_is_delivered_as_a_won_prize_is() -> None:
    w = world(rate="1")  # PRIZE is PHYSICAL
    sold = replace(sale(), award_id=PRIZE)
    assert await deliver_sold(w.shards, sold, "fs1111-bob-1", "bob", START) is True
    (message,) = _sent(w)
    assert w.shards.store.wins["fs1111-bob-1"].rule == SOLD_AWARD
    assert (await w.catalogue.awards())[PRIZE].kind is AwardKind.PHYSICAL
    assert await deliver(message, _context(w)) is True
    assert list(w.shards.store.shipments) == ["fs1111-bob-1"]


async def test_the_item_itself_leaves_nothing_to_deliver() -> None:
    w = world()
    assert await deliver_sold(w.shards, sale(), "fs1111-carol-1", "carol", START) is False
    assert w.shards.store.wins == {}
    assert _sent(w) == []


def test_a_long_order_id_keys_its_record_within_the_columns_width() -> None:
    long = "fs1111-" + "u" * 32 + "-1"
    assert len(record_id(long)) == RECORD_ID_MAX
    assert record_id(long) == record_id(long) != record_id(long[:-1] + "2")
    assert record_id("fs1111-alice-1") == "fs1111-alice-1"


async def _bought(sales: FlashSales, user: str) -> Answer:
    challenge = await sales.challenge(1111, user)
    path = await sales.path(1111, user, challenge, solve(challenge), "10.0.0.1")
    return await sales.purchase(1111, user, path, "10.0.0.1")


async def test_a_points_order_is_delivered_at_once_and_a_redelivery_adds_nothing() -> None:
    sales = await flash()
    sent: list[OutboxMessage] = []
    consumer = asyncio.create_task(sales.broker.consume(PURCHASED, sales.handle))
    real = sales.broker.publish

    async def keep(message: OutboxMessage) -> None:
        sent.append(message)
        await real(message)

    sales.broker.publish = keep  # type: ignore[method-assign]
    await sales.create(replace(sale(currency=Currency.POINTS, price=500), award_id=PRIZE))
    async with sales.shards.for_user("alice") as uow:
        await earn(uow, user_id="alice", amount=800, out_business_no="gift", reason="", now=START)
        await uow.commit()
    assert await _bought(sales, "alice") is Answer.QUEUED
    await sales.handle(sent[0])  # redelivered
    shards = sales.shards.store  # type: ignore[attr-defined]
    assert list(shards.wins) == ["fs1111-alice-1"]
    assert [m.key for m in shards.outbox if m.topic == WON] == ["fs1111-alice-1"]
    consumer.cancel()


async def test_a_cents_order_waits_for_its_payment() -> None:
    sales = await flash()
    consumer = asyncio.create_task(sales.broker.consume(PURCHASED, sales.handle))
    await sales.create(replace(sale(), award_id=PRIZE))
    assert await _bought(sales, "alice") is Answer.QUEUED
    assert await sales.result(1111, "alice") == "fs1111-alice-1"
    assert sales.shards.store.wins == {}  # type: ignore[attr-defined]
    consumer.cancel()


def test_a_payment_order_names_a_flash_order_as_no_content_can_be_named() -> None:
    assert paid_for(paying_for("fs1111-alice-1")) == "fs1111-alice-1"
    assert paid_for("course-1") is None
    assert paid_for("flash-course") is None
