"""Flash sales in SQL on every backend: one order per unit, none past the stock, redelivery
answered as before, expiry returning the unit."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.repositories.flash_sales import SqlFlashSales
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork
from raffle.domain.awards import Award, AwardKind
from raffle.domain.campaign import Campaign
from raffle.domain.flash_sales import LIVE, Currency, OrderState, Purchase, Sale
from raffle.service.campaign_export import export_campaign
from raffle.service.campaigns import load_campaign
from raffle.service.ports.flash_sales import Holding

AT = datetime(2026, 11, 11, 4, 0, 1, tzinfo=UTC)
WINDOW = timedelta(minutes=15)


def sale(stock: int = 5, currency: Currency = Currency.CENTS) -> Sale:
    return Sale(
        id=2**40 + 3,  # a BIGINT
        name="限量保温杯",
        price=990,
        currency=currency,
        stock=stock,
        starts_at=AT - timedelta(seconds=1),
        ends_at=AT + timedelta(hours=1),
        time_zone="Asia/Shanghai",
        original_price=5900,
        description="One per person.",
        image="https://example.com/cup.png",
    )


async def test_a_sale_comes_back_as_stored_once(engine: AsyncEngine) -> None:
    store = SqlFlashSales(engine)
    assert await store.add(sale())
    assert not await store.add(sale())
    assert await store.get(sale().id) == sale()
    assert await store.all() == [sale()]
    assert await store.get(1) is None


async def test_orders_never_pass_the_stock_and_a_redelivery_is_the_same_order(
    engine: AsyncEngine,
) -> None:
    store, s = SqlFlashSales(engine), sale(stock=3)
    await store.add(s)
    purchases = [Purchase(s.id, f"user{i}", 1, AT) for i in range(6)]
    made = await asyncio.gather(*(store.order(p, s, AT + WINDOW) for p in purchases))
    assert sorted(made)[:3] == ["", "", ""]
    assert {m for m in made if m} <= {p.order_id for p in purchases}
    assert sum(map(bool, made)) == 3
    again = await asyncio.gather(*(store.order(p, s, AT + WINDOW) for p in purchases))
    assert again == made  # redelivered: answered as before, nothing added
    assert await store.counts(s.id) == {"awaiting_payment": 3, "refused": 3}
    sold, holders = await store.holders(s.id)
    assert sold == 3
    assert holders[purchases[0].user_id].seq == 1


async def test_an_overdue_order_expires_once_and_its_unit_is_sold_again(
    engine: AsyncEngine,
) -> None:
    store, s = SqlFlashSales(engine), sale(stock=1)
    await store.add(s)
    first = Purchase(s.id, "alice", 1, AT)
    assert await store.order(first, s, AT + WINDOW) == first.order_id
    assert await store.order(Purchase(s.id, "bob", 1, AT), s, AT + WINDOW) == ""

    assert await store.overdue(AT + WINDOW - timedelta(seconds=1), 10) == []
    (overdue,) = await store.overdue(AT + WINDOW, 10)
    assert overdue.order_id == first.order_id
    assert await store.expire(overdue, AT + WINDOW)
    assert not await store.expire(overdue, AT + WINDOW)  # once

    later = Purchase(s.id, "carol", 1, AT + WINDOW)
    assert await store.order(later, s, AT + 2 * WINDOW) == later.order_id
    (expired,) = await store.of_user(s.id, "alice")
    assert expired.state is OrderState.EXPIRED
    sold, holders = await store.holders(s.id)
    assert sold == 1
    assert holders["alice"] == Holding(0, 1)
    assert holders["carol"] == Holding(1, 1)


async def test_a_points_sale_is_done_when_ordered(engine: AsyncEngine) -> None:
    store, s = SqlFlashSales(engine), sale(currency=Currency.POINTS)
    await store.add(s)
    await store.order(Purchase(s.id, "alice", 1, AT), s, None)
    (done,) = await store.of_user(s.id, "alice")
    assert (done.state, done.expires_at) == (OrderState.DONE, None)


async def test_a_campaign_file_loads_its_sales_once_and_exports_them(engine: AsyncEngine) -> None:
    campaign = Campaign((Award(1, AwardKind.THANKS, "谢谢"),), (), flash_sales=(sale(),))
    await load_campaign(campaign, SqlUnitOfWork(engine))
    await load_campaign(replace(campaign, flash_sales=(sale(stock=1),)), SqlUnitOfWork(engine))
    exported = (await export_campaign(SqlUnitOfWork(engine))).campaign
    assert exported.flash_sales == (sale(),)  # the stored sale kept as it was


async def test_a_refusal_is_stored_once_and_takes_no_unit(engine: AsyncEngine) -> None:
    store, s = SqlFlashSales(engine), sale(stock=1, currency=Currency.POINTS)
    await store.add(s)
    short = Purchase(s.id, "bob", 1, AT)
    assert await store.refuse(short, s)
    assert not await store.refuse(short, s)
    assert await store.order(short, s, None) == ""  # a redelivery reads the refusal
    assert await store.counts(s.id) == {"refused": 1}
    later = Purchase(s.id, "carol", 1, AT)
    assert await store.order(later, s, None) == later.order_id  # the unit is still there


async def test_one_users_purchases_at_once_make_no_more_orders_than_their_limit(
    engine: AsyncEngine,
) -> None:
    # After the fast stock was lost and rebuilt, a user's purchase queued before the loss and
    # one taken after it both reach the consumers, under different seqs; only the database
    # then knows the user's limit. Delivered at once, they are counted one after the other.
    store, s = SqlFlashSales(engine), sale(stock=4)
    await store.add(s)
    purchases = [Purchase(s.id, "alice", seq, AT) for seq in range(1, 5)]
    for _ in range(5):  # a race lost once may be won the next time
        made = await asyncio.gather(*(store.order(p, s, AT + WINDOW) for p in purchases))
        assert sum(map(bool, made)) == 1, made
        sold, holders = await store.holders(s.id)
        assert (sold, holders["alice"]) == (1, Holding(1, purchases[-1].seq))
        (order,) = [o for o in await store.of_user(s.id, "alice") if o.state in LIVE]
        assert await store.expire(order, AT + WINDOW)  # the next round starts from nothing
        purchases = [replace(p, seq=p.seq + 4) for p in purchases]
    assert await store.counts(s.id) == {"expired": 5, "refused": 15}
    carol = Purchase(s.id, "carol", 1, AT)
    assert await store.order(carol, s, AT + WINDOW) == carol.order_id  # the units are there
