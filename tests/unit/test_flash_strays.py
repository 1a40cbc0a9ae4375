"""Stranded units (taken in the fast stock, never ordered) given back on fakes, once."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

from raffle.domain.flash_gate import solve
from raffle.domain.flash_sales import PURCHASED, Answer, OrderState
from raffle.service.flash_sales import FlashSales
from raffle.service.flash_strays import Strays, reconcile
from tests.unit.fakes import FakeClock
from tests.unit.flash_fakes import flash, sale


async def _buy(sales: FlashSales, user: str) -> Answer:
    challenge = await sales.challenge(1111, user)
    path = await sales.path(1111, user, challenge, solve(challenge), "10.0.0.1")
    return await sales.purchase(1111, user, path, "10.0.0.1")


async def test_a_unit_taken_and_never_ordered_comes_back_after_the_grace() -> None:
    sales = await flash()
    clock = sales.clock
    assert isinstance(clock, FakeClock)
    consumer = asyncio.create_task(sales.broker.consume(PURCHASED, sales.handle))
    await sales.create(sale(stock=2))
    assert await _buy(sales, "alice") is Answer.QUEUED  # ordered: never a stray
    await sales.stock.take(1111, "bob", 1, "lost")  # taken; its message never arrived
    assert await _buy(sales, "carol") is Answer.SOLD_OUT
    assert sales.marks.sold_out(1111)
    strays = Strays()
    assert await reconcile(sales, strays) == 0  # first seen
    clock.advance(299)
    assert await reconcile(sales, strays) == 0  # it may still arrive
    clock.advance(2)
    assert await reconcile(sales, strays) == 1
    assert await sales.stock.left(1111) == 1
    assert not sales.marks.sold_out(1111)  # the unit is for sale again
    assert await _buy(sales, "carol") is Answer.QUEUED
    assert await reconcile(sales, strays) == 0  # carol's is ordered
    clock.advance(600)
    assert await reconcile(sales, strays) == 0
    assert await sales.stock.left(1111) == 0
    consumer.cancel()


async def test_a_picture_that_changed_starts_its_wait_again() -> None:
    sales = await flash()
    clock = sales.clock
    assert isinstance(clock, FakeClock)
    await sales.create(replace(sale(stock=3), per_user=2))
    strays = Strays()
    await sales.stock.take(1111, "bob", 2, "first")
    assert await reconcile(sales, strays) == 0
    clock.advance(200)
    await sales.stock.take(1111, "bob", 2, "second")  # bob took another meanwhile
    clock.advance(200)
    assert await reconcile(sales, strays) == 0  # the new picture waits its own grace
    clock.advance(timedelta(minutes=5).total_seconds())
    assert await reconcile(sales, strays) == 2
    assert await sales.stock.left(1111) == 3


async def test_a_stray_under_a_seq_below_an_order_comes_back_and_no_unit_twice() -> None:
    sales = await flash()
    clock = sales.clock
    assert isinstance(clock, FakeClock)
    consumer = asyncio.create_task(sales.broker.consume(PURCHASED, sales.handle))
    await sales.create(replace(sale(stock=3), per_user=3))
    await sales.stock.take(1111, "bob", 3, "answered 503")  # seq 1, its unit back at once
    await sales.stock.give_back(1111, "bob")
    await sales.stock.take(1111, "bob", 3, "lost")  # seq 2: stranded
    assert await _buy(sales, "bob") is Answer.QUEUED  # seq 3, ordered
    await asyncio.sleep(0)
    assert await sales.stock.left(1111) == 1
    strays = Strays()
    assert await reconcile(sales, strays) == 0
    clock.advance(301)
    assert await reconcile(sales, strays) == 1  # seq 2's unit; seq 1's came back before
    assert await sales.stock.left(1111) == 2
    states = [(o.seq, o.state) for o in await sales.store.of_user(1111, "bob")]
    assert states == [
        (1, OrderState.REFUSED),
        (2, OrderState.REFUSED),
        (3, OrderState.AWAITING_PAYMENT),
    ]
    clock.advance(600)
    assert await reconcile(sales, strays) == 0
    assert await reconcile(sales, strays) == 0
    assert await sales.stock.left(1111) == 2
    consumer.cancel()
