"""Points use cases on fakes: earn and spend once per business number, exchange for chances."""

from __future__ import annotations

import pytest

from raffle.domain.activity import ActivityState
from raffle.domain.draws import ActivityNotOpen
from raffle.domain.points import InsufficientPoints, InvalidPoints, PointsAccount
from raffle.domain.quota import Sku, SkuSoldOut
from raffle.service.idempotency import KeyReused
from raffle.service.points import Exchange, ExchangeResult, earn, exchange, my_points, spend
from tests.unit.usecase_world import ACTIVITY, SKU, World, world

PRICE = 100  # the world's SKU costs 100 points and sells pack 22 (5 chances)


async def _earn(w: World, amount: int, no: str, user: str = "alice") -> bool:
    async with w.shards.for_user(user) as uow:
        applied = await earn(
            uow, user_id=user, amount=amount, out_business_no=no, reason="test", now=w.clock.now()
        )
        await uow.commit()
    return applied


async def _exchange(w: World, key: str | None = None, user: str = "alice") -> ExchangeResult:
    return await exchange(
        Exchange(user, SKU, key),
        catalogue=w.catalogue,
        config=w.uow,
        shards=w.shards,
        clock=w.clock,
        hints=w.hints,
    )


async def test_earning_twice_with_one_business_number_applies_once() -> None:
    w = world()
    assert await _earn(w, 30, "award-1")
    assert not await _earn(w, 30, "award-1")
    assert await _earn(w, 5, "award-2")
    assert w.shards.store.points["alice"] == PointsAccount("alice", 35, 35)


async def test_a_spend_the_balance_does_not_cover_changes_nothing() -> None:
    w = world()
    await _earn(w, 10, "e-1")
    async with w.shards.for_user("alice") as uow:
        with pytest.raises(InsufficientPoints):
            await spend(
                uow,
                user_id="alice",
                amount=11,
                out_business_no="s-1",
                reason="x",
                now=w.clock.now(),
            )
    assert w.shards.store.points["alice"].available == 10
    assert ("alice", "s-1") not in w.shards.store.points_orders


async def test_amounts_must_be_positive() -> None:
    w = world()
    with pytest.raises(InvalidPoints):
        await _earn(w, 0, "e-0")


async def test_an_exchange_debits_the_price_and_credits_the_skus_chances() -> None:
    w = world()
    await _earn(w, 250, "e-1")
    done = await _exchange(w, key="k-1")
    assert done.exchanged
    assert (done.points.available, done.points.total) == (150, 250)
    assert done.order.amount == PRICE
    assert done.account.total == 10 + 5  # a first touch opens the welcome pack; pack 22 added
    assert w.config.sku_left[SKU] == 99


async def test_an_exchange_retried_with_its_key_happens_once() -> None:
    w = world()
    await _earn(w, 250, "e-1")
    first = await _exchange(w, key="k-1")
    again = await _exchange(w, key="k-1")
    assert not again.exchanged
    assert again.order == first.order
    assert again.points.available == 150
    assert again.account.total == 15
    assert w.config.sku_left[SKU] == 99


async def test_an_exchange_key_used_again_for_another_sku_is_refused() -> None:
    w = world()
    w.config.skus[32] = Sku(32, ACTIVITY, 22, 10, 50)
    w.config.sku_left[32] = 10
    await _earn(w, 250, "e-1")
    await _exchange(w, key="k-1")
    with pytest.raises(KeyReused):
        await exchange(
            Exchange("alice", 32, "k-1"), catalogue=w.catalogue, config=w.uow,
            shards=w.shards, clock=w.clock, hints=w.hints,
        )  # fmt: skip
    assert w.shards.store.points["alice"].available == 150
    assert w.config.sku_left[32] == 10


async def test_an_exchange_without_enough_points_changes_nothing() -> None:
    w = world()
    await _earn(w, 99, "e-1")
    with pytest.raises(InsufficientPoints):
        await _exchange(w, key="k-1")
    assert w.shards.store.points["alice"].available == 99
    assert w.shards.store.top_ups == {}
    assert w.config.sku_left[SKU] == 100
    assert w.shards.store.outbox == []


async def test_a_sold_out_sku_is_not_exchanged_and_keeps_the_points() -> None:
    w = world(sku_stock=0)
    await _earn(w, 500, "e-1")
    with pytest.raises(SkuSoldOut):
        await _exchange(w, key="k-1")
    assert w.shards.store.points["alice"].available == 500


async def test_an_activity_that_is_not_running_sells_no_chances() -> None:
    w = world()
    w.set_state(ActivityState.CLOSED)
    await _earn(w, 500, "e-1")
    with pytest.raises(ActivityNotOpen):
        await _exchange(w, key="k-1")


async def test_my_points_pages_newest_first() -> None:
    w = world()
    for n in range(5):
        await _earn(w, n + 1, f"e-{n}")
        w.clock.advance(1)
    first = await my_points("alice", shards=w.shards, before=None, limit=2)
    assert first.account.available == 15
    assert [o.amount for o in first.orders] == [5, 4]
    rest = await my_points("alice", shards=w.shards, before=first.next, limit=10)
    assert [o.amount for o in rest.orders] == [3, 2, 1]
    assert rest.next is None
