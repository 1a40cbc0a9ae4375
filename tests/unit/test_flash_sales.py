"""Flash sale use cases over fakes: answers, the per-user limit, marks, expiry, the queue."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from raffle.domain.deny import Denied
from raffle.domain.draws import OutboxMessage
from raffle.domain.errors import Unavailable
from raffle.domain.flash_gate import solve
from raffle.domain.flash_sales import (
    PURCHASED,
    Answer,
    BadPath,
    Currency,
    InvalidSale,
    PathExpired,
    SaleNotOpen,
    WrongAnswer,
)
from raffle.service.flash_sales import FlashSales, QueueFull
from raffle.service.points import earn
from raffle.service.ports.flash_sales import Taking
from tests.unit.fakes import FakeClock
from tests.unit.flash_fakes import START, FakeSaleStore, flash, sale


@pytest.fixture
async def sales() -> AsyncIterator[FlashSales]:
    made = await flash()
    consumer = asyncio.create_task(made.broker.consume(PURCHASED, made.handle))
    await made.create(sale())
    yield made
    consumer.cancel()


async def path(sales: FlashSales, user: str, sale_id: int = 1111) -> str:
    challenge = await sales.challenge(sale_id, user)
    return await sales.path(sale_id, user, challenge, solve(challenge), "10.0.0.1")


async def buy(sales: FlashSales, user: str) -> Answer:
    return await sales.purchase(1111, user, await path(sales, user), "10.0.0.1")


def store(sales: FlashSales) -> FakeSaleStore:
    assert isinstance(sales.store, FakeSaleStore)
    return sales.store


async def test_a_purchase_is_queued_then_polled_to_its_order(sales: FlashSales) -> None:
    assert await sales.result(1111, "alice") == Answer.QUEUED  # just loaded: may be in flight
    assert isinstance(sales.clock, FakeClock)
    sales.clock.advance(60)
    assert await sales.result(1111, "alice") == Answer.SOLD_OUT  # nothing bought
    assert await buy(sales, "alice") is Answer.QUEUED
    assert await sales.result(1111, "alice") == "fs1111-alice-1"
    assert await sales.stock.left(1111) == 2
    assert store(sales).sold[1111] == 1


async def test_a_user_at_the_limit_takes_nothing(sales: FlashSales) -> None:
    assert await buy(sales, "alice") is Answer.QUEUED
    assert await buy(sales, "alice") is Answer.ALREADY_BOUGHT
    assert await sales.stock.left(1111) == 2  # the duplicate check came first
    assert len(store(sales).orders) == 1


async def test_once_sold_out_the_mark_answers_without_the_stock(sales: FlashSales) -> None:
    for user in ("a", "b", "c"):
        assert await buy(sales, user) is Answer.QUEUED
    assert await buy(sales, "d") is Answer.SOLD_OUT
    taken = 0
    real = sales.stock.take

    async def counted(sale_id: int, user_id: str, per_user: int, attempt: str) -> Taking:
        nonlocal taken
        taken += 1
        return await real(sale_id, user_id, per_user, attempt)

    sales.stock.take = counted  # type: ignore[method-assign]
    assert await buy(sales, "e") is Answer.SOLD_OUT
    assert taken == 0


async def test_an_expired_order_is_sold_again_and_the_marks_clear() -> None:
    clock = FakeClock(START + timedelta(minutes=1))
    sales = await flash(clock=clock)
    consumer = asyncio.create_task(sales.broker.consume(PURCHASED, sales.handle))
    await sales.create(sale(stock=1))
    assert await buy(sales, "alice") is Answer.QUEUED
    assert await buy(sales, "bob") is Answer.SOLD_OUT
    assert sales.marks.sold_out(1111)

    clock.advance(15 * 60)
    assert await sales.expire() == 1

    assert not sales.marks.sold_out(1111)
    assert await sales.result(1111, "alice") == Answer.SOLD_OUT  # expired
    assert await buy(sales, "bob") is Answer.QUEUED
    assert await sales.result(1111, "bob") == "fs1111-bob-1"
    assert store(sales).sold[1111] == 1
    assert await sales.expire() == 0  # bob's window runs from his own order
    consumer.cancel()


async def points_sale(stock: int = 3) -> tuple[FlashSales, FakeClock, asyncio.Task[None]]:
    clock = FakeClock(START + timedelta(minutes=1))
    sales = await flash(clock=clock)
    consumer = asyncio.create_task(sales.broker.consume(PURCHASED, sales.handle))
    await sales.create(sale(stock=stock, currency=Currency.POINTS, price=500))
    for user, balance in (("alice", 800), ("bob", 499)):
        async with sales.shards.for_user(user) as uow:
            await earn(
                uow, user_id=user, amount=balance, out_business_no="gift", reason="", now=START
            )
            await uow.commit()
    return sales, clock, consumer


async def balance(sales: FlashSales, user: str) -> int:
    async with sales.shards.for_user(user) as uow:
        account = await uow.points.account(user)
    return 0 if account is None else account.available


async def test_points_are_taken_with_the_order_which_never_expires() -> None:
    sales, clock, consumer = await points_sale()
    assert await buy(sales, "alice") is Answer.QUEUED
    assert await balance(sales, "alice") == 300
    clock.advance(3600)
    assert await sales.expire() == 0
    assert [o.state.value for o in store(sales).orders.values()] == ["done"]
    consumer.cancel()


async def test_a_balance_short_of_the_price_refuses_and_gives_the_unit_back() -> None:
    sales, _, consumer = await points_sale()
    assert await buy(sales, "bob") is Answer.QUEUED  # the balance is the consumer's to check
    assert await sales.result(1111, "bob") == Answer.SOLD_OUT
    assert await balance(sales, "bob") == 499
    assert await sales.stock.left(1111) == 3
    assert store(sales).sold[1111] == 0
    consumer.cancel()


async def test_points_come_back_when_the_database_has_no_unit_left() -> None:
    sales, _, consumer = await points_sale(stock=1)
    store(sales).sold[1111] = 1  # sold meanwhile, as after a fast stock lost mid-sale
    assert await buy(sales, "alice") is Answer.QUEUED
    assert await sales.result(1111, "alice") == Answer.SOLD_OUT
    assert await balance(sales, "alice") == 800
    consumer.cancel()


async def test_paths_refused_take_nothing(sales: FlashSales) -> None:
    mine = await path(sales, "alice")
    for user, forged, error in (
        ("bob", mine, BadPath),  # another user's
        ("alice", "123-" + "0" * 32, BadPath),
        ("alice", "nonsense", BadPath),
    ):
        with pytest.raises(error):
            await sales.purchase(1111, user, forged, None)
    assert isinstance(sales.clock, FakeClock)
    sales.clock.advance(30)
    with pytest.raises(PathExpired):
        await sales.purchase(1111, "alice", mine, None)
    assert await sales.stock.left(1111) == 3
    assert store(sales).orders == {}


async def test_a_wrong_answer_gets_no_path(sales: FlashSales) -> None:
    challenge = await sales.challenge(1111, "alice")
    answer = solve(challenge)
    wrong = next(
        a for a in map(str, range(10_000)) if a != answer and not _solves(sales, challenge, a)
    )
    with pytest.raises(WrongAnswer):
        await sales.path(1111, "alice", challenge, wrong, None)
    with pytest.raises(WrongAnswer):  # bob cannot use alice's solved challenge
        await sales.path(1111, "bob", challenge, answer, None)


async def test_outside_its_time_a_sale_gives_no_path() -> None:
    sales = await flash(clock=FakeClock(START - timedelta(seconds=1)))
    await sales.create(sale())
    challenge = await sales.challenge(1111, "alice")
    with pytest.raises(SaleNotOpen):
        await sales.path(1111, "alice", challenge, solve(challenge), None)


async def test_a_listed_user_gets_no_path() -> None:
    sales = await flash(denied=("mallory",))
    await sales.create(sale())
    challenge = await sales.challenge(1111, "mallory")
    with pytest.raises(Denied):
        await sales.path(1111, "mallory", challenge, solve(challenge), None)


async def test_at_the_queue_bound_the_unit_goes_back() -> None:
    sales = await flash(queue_bound=0)
    await sales.create(sale())
    with pytest.raises(QueueFull):
        await buy(sales, "alice")
    assert await sales.stock.left(1111) == 3
    holding = await sales.stock.holding(1111, "alice")
    assert holding is not None
    assert holding.held == 0


async def test_an_unconfirmed_publish_gives_the_unit_back() -> None:
    sales = await flash()
    await sales.create(sale())

    async def refused(message: OutboxMessage) -> None:
        raise Unavailable("the broker did not confirm")

    sales.broker.publish = refused  # type: ignore[method-assign]
    with pytest.raises(Unavailable):
        await buy(sales, "alice")
    assert await sales.stock.left(1111) == 3


async def test_a_redelivered_purchase_makes_no_second_order(sales: FlashSales) -> None:
    sent: list[OutboxMessage] = []
    real = sales.broker.publish

    async def keep(message: OutboxMessage) -> None:
        sent.append(message)
        await real(message)

    sales.broker.publish = keep  # type: ignore[method-assign]
    assert await buy(sales, "alice") is Answer.QUEUED
    await sales.handle(sent[0])
    await sales.handle(sent[0])
    assert len(store(sales).orders) == 1
    assert store(sales).sold[1111] == 1


async def test_a_lost_fast_stock_is_rebuilt_from_the_orders_and_oversells_nothing(
    sales: FlashSales,
) -> None:
    assert await buy(sales, "alice") is Answer.QUEUED
    await sales.stock.unload(1111)  # a Redis restart without persistence
    assert await buy(sales, "alice") is Answer.ALREADY_BOUGHT  # who bought came back too
    for user in ("b", "c", "d"):
        await buy(sales, user)
    assert store(sales).sold[1111] == 3
    assert await sales.stock.left(1111) == 0


def test_a_sale_with_problems_names_each() -> None:
    with pytest.raises(InvalidSale) as invalid:
        sale(stock=0)
    assert [f for f, _ in invalid.value.problems] == ["stock"]


def _solves(sales: FlashSales, challenge: str, answer: str) -> bool:
    try:
        sales.gate.check_answer(1111, "alice", challenge, answer, sales.clock.now())
    except WrongAnswer:
        return False
    return True


async def test_a_publish_confirmed_too_late_keeps_its_order_and_its_unit_once(
    sales: FlashSales,
) -> None:
    real = sales.broker.publish
    lost = [True]

    async def arrived_unconfirmed(message: OutboxMessage) -> None:
        await real(message)
        if lost.pop() if lost else False:
            raise Unavailable("the confirmation was lost")

    sales.broker.publish = arrived_unconfirmed  # type: ignore[method-assign]
    with pytest.raises(Unavailable):  # the player is told to ask again
        await buy(sales, "alice")
    # The copy that arrived made her order: it stands, and its unit is not given back too.
    assert await buy(sales, "alice") is Answer.ALREADY_BOUGHT
    assert [o.state.value for o in store(sales).orders.values()] == ["awaiting_payment"]
    assert await sales.stock.left(1111) == 2
    assert await sales.result(1111, "alice") == "fs1111-alice-1"


async def test_a_copy_arriving_after_its_unconfirmed_purchase_was_withdrawn_makes_no_order(
    sales: FlashSales,
) -> None:
    sent: list[OutboxMessage] = []

    async def unconfirmed(message: OutboxMessage) -> None:
        sent.append(message)  # reached the queue; only its confirmation was lost
        raise Unavailable("the confirmation was lost")

    sales.broker.publish = unconfirmed  # type: ignore[method-assign]
    with pytest.raises(Unavailable):
        await buy(sales, "alice")
    assert await sales.stock.left(1111) == 3  # withdrawn: the unit back
    await sales.handle(sent[0])  # the copy, late
    assert [o.state.value for o in store(sales).orders.values()] == ["refused"]
    assert store(sales).sold[1111] == 0
    assert await sales.stock.left(1111) == 3  # not back twice, not sold


async def test_a_purchase_queued_across_a_lost_fast_stock_counts_against_the_limit() -> None:
    sales = await flash()
    await sales.create(sale())
    sent: list[OutboxMessage] = []

    async def queued(message: OutboxMessage) -> None:
        sent.append(message)  # confirmed; the consumers are down

    sales.broker.publish = queued  # type: ignore[method-assign]
    sales.in_flight = sales.limits.queue_bound
    with pytest.raises(QueueFull):  # seq 1 taken and given back
        await buy(sales, "alice")
    sales.in_flight = 0
    assert await buy(sales, "alice") is Answer.QUEUED  # seq 2
    await sales.stock.unload(1111)  # lost: seq 2 is in no row, nor is alice
    assert await buy(sales, "alice") is Answer.QUEUED  # seq 1 again, another order id
    for message in sent:
        await sales.handle(message)
    states = sorted(o.state.value for o in store(sales).orders.values())
    assert states == ["awaiting_payment", "refused"]
    # The refused purchase's unit is not given back: it is the one the order from before the
    # loss holds, which the rebuilt fast stock did not count.
    assert (store(sales).sold[1111], await sales.stock.left(1111)) == (1, 2)
    assert await buy(sales, "alice") is Answer.ALREADY_BOUGHT
    assert await sales.result(1111, "alice") == "fs1111-alice-2"


async def test_a_purchase_refused_after_a_lost_fast_stock_leaves_its_buyer_holding_nothing() -> (
    None
):
    sales = await flash()
    await sales.create(sale(stock=1))
    sent: list[OutboxMessage] = []

    async def queued(message: OutboxMessage) -> None:
        sent.append(message)  # confirmed; the consumers are down

    sales.broker.publish = queued  # type: ignore[method-assign]
    assert await buy(sales, "bob") is Answer.QUEUED
    await sales.stock.unload(1111)  # lost with bob's purchase queued: no row holds his unit
    assert isinstance(sales.clock, FakeClock)
    sales.clock.advance(1)
    assert await buy(sales, "alice") is Answer.QUEUED  # the unit the rebuilt stock thought left
    for message in sent:
        await sales.handle(message)
    states = {o.user_id: o.state.value for o in store(sales).orders.values()}
    assert states == {"bob": "awaiting_payment", "alice": "refused"}
    holding = await sales.stock.holding(1111, "alice")
    assert holding is not None
    assert holding.held == 0  # she holds no unit: she is not told "already bought"
    assert await sales.stock.left(1111) == 0  # the unit is bob's
    assert await buy(sales, "alice") is Answer.SOLD_OUT
    sales.clock.advance(15 * 60)
    assert await sales.expire() == 1  # bob never paid: his unit comes back
    assert await buy(sales, "alice") is Answer.QUEUED
    await sales.handle(sent[1])  # her refused purchase again: the one in flight keeps its unit
    holding = await sales.stock.holding(1111, "alice")
    assert holding is not None
    assert holding.held == 1
    await sales.handle(sent[-1])
    assert await sales.result(1111, "alice") == "fs1111-alice-2"
