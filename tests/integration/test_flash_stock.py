"""Flash sale units on real Redis (one server, and a cluster) and in memory: the duplicate
check before the take, concurrent buyers, units given back, loads that never overwrite."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from raffle.adapters.flash_stock import MemorySaleStock, RedisSaleStock
from raffle.domain.flash_sales import Answer
from raffle.service.ports.flash_sales import Holding, SaleStock, Taking
from tests.integration.redis_clients import connected


@pytest.fixture(params=["redis", "redis-cluster", "memory"])
async def stock(request: pytest.FixtureRequest) -> AsyncIterator[SaleStock]:
    if request.param == "memory":
        yield MemorySaleStock()
        return
    async with connected(request, request.param) as (_, commands):
        yield RedisSaleStock(commands)


AT = datetime(2026, 11, 11, 4, tzinfo=UTC)


def next_attempt() -> str:
    return secrets.token_hex(8)


def sale_id() -> int:
    return secrets.randbelow(2**40) + 1  # a sale of this test's own, whichever Redis


async def test_an_unloaded_sale_says_so_and_takes_nothing(stock: SaleStock) -> None:
    s = sale_id()
    assert await stock.take(s, "alice", 1, next_attempt()) == Taking(Answer.SOLD_OUT, loaded=False)
    assert await stock.left(s) is None
    assert await stock.holding(s, "alice") is None
    assert not await stock.give_back(s, "alice")


async def test_the_duplicate_check_comes_before_the_unit(stock: SaleStock) -> None:
    s = sale_id()
    assert await stock.load(s, 2, {}, AT)
    assert await stock.take(s, "alice", 1, next_attempt()) == Taking(Answer.QUEUED, 1)
    assert await stock.take(s, "alice", 1, next_attempt()) == Taking(Answer.ALREADY_BOUGHT)
    assert await stock.left(s) == 1
    assert await stock.take(s, "bob", 1, next_attempt()) == Taking(Answer.QUEUED, 1)
    assert await stock.take(s, "carol", 1, next_attempt()) == Taking(Answer.SOLD_OUT)
    assert await stock.left(s) == 0


async def test_a_unit_given_back_is_sold_again_under_a_new_sequence(stock: SaleStock) -> None:
    s = sale_id()
    await stock.load(s, 1, {}, AT)
    assert (await stock.take(s, "alice", 1, next_attempt())).seq == 1
    assert await stock.give_back(s, "alice")
    assert await stock.holding(s, "alice") == Holding(0, 1, AT)
    assert await stock.take(s, "alice", 1, next_attempt()) == Taking(Answer.QUEUED, 2)


async def test_a_take_sent_again_answers_as_it_did(stock: SaleStock) -> None:
    s = sale_id()
    await stock.load(s, 3, {}, AT)
    assert await stock.take(s, "alice", 1, "a1") == Taking(Answer.QUEUED, 1)
    if isinstance(stock, RedisSaleStock):  # a batch sent again after a lost connection
        assert await stock.take(s, "alice", 1, "a1") == Taking(Answer.QUEUED, 1)
    assert await stock.take(s, "alice", 1, "a2") == Taking(Answer.ALREADY_BOUGHT)
    assert await stock.left(s) == 2


async def test_a_load_never_overwrites_a_loaded_sale(stock: SaleStock) -> None:
    s = sale_id()
    assert await stock.load(s, 5, {"alice": Holding(1, 3)}, AT)
    assert await stock.holding(s, "alice") == Holding(1, 3, AT)
    assert await stock.take(s, "alice", 2, next_attempt()) == Taking(Answer.QUEUED, 4)
    assert not await stock.load(s, 5, {}, AT)
    assert await stock.left(s) == 4
    await stock.unload(s)
    assert await stock.left(s) is None


async def test_many_buyers_at_once_take_exactly_the_stock_once_each(stock: SaleStock) -> None:
    s = sale_id()
    await stock.load(s, 100, {}, AT)
    users = [f"u{i % 700}" for i in range(2_000)]  # some press twice or more
    answers = await asyncio.gather(*(stock.take(s, u, 1, next_attempt()) for u in users))
    queued = [u for u, a in zip(users, answers, strict=True) if a.answer is Answer.QUEUED]
    assert len(queued) == 100
    assert len(set(queued)) == 100
    assert await stock.left(s) == 0


async def test_a_stray_comes_back_only_while_its_count_is_the_one_seen(stock: SaleStock) -> None:
    s = sale_id()
    assert await stock.holders(s) is None
    assert not await stock.give_back_stray(s, "alice", Holding(1, 1), 1)
    await stock.load(s, 3, {"bob": Holding(1, 2)}, AT)
    await stock.take(s, "alice", 2, next_attempt())
    await stock.take(s, "alice", 2, next_attempt())
    assert await stock.holders(s) == {"alice": Holding(2, 2), "bob": Holding(1, 2)}
    assert not await stock.give_back_stray(s, "alice", Holding(1, 1), 1)  # an old picture
    assert await stock.left(s) == 1
    assert await stock.give_back_stray(s, "alice", Holding(2, 2), 2)
    assert await stock.holders(s) == {"alice": Holding(0, 2), "bob": Holding(1, 2)}
    assert await stock.left(s) == 3
    assert not await stock.give_back_stray(s, "alice", Holding(2, 2), 2)  # once only
    assert await stock.left(s) == 3


async def test_a_hold_drops_once_a_purchase_while_its_count_is_the_one_seen(
    stock: SaleStock,
) -> None:
    s = sale_id()
    assert not await stock.drop_hold(s, "alice", 1, Holding(1, 1))  # not loaded
    await stock.load(s, 3, {}, AT)
    await stock.take(s, "alice", 2, next_attempt())
    await stock.take(s, "alice", 2, next_attempt())
    assert not await stock.drop_hold(s, "alice", 1, Holding(1, 1))  # an old picture
    assert await stock.drop_hold(s, "alice", 1, Holding(2, 2))
    assert await stock.holders(s) == {"alice": Holding(1, 2)}
    assert await stock.left(s) == 1  # the unit stays taken
    assert not await stock.drop_hold(s, "alice", 1, Holding(1, 2))  # once for seq 1
    assert await stock.drop_hold(s, "alice", 2, Holding(1, 2))
    assert not await stock.drop_hold(s, "alice", 3, Holding(0, 2))  # nothing left to drop
    assert (await stock.holders(s), await stock.left(s)) == ({"alice": Holding(0, 2)}, 1)
