"""Coupon codes, content grants and shipments on real databases, sharded 2 x 4 (and SQLite
alone, 1 x 1): exactly once under concurrency, on either side of the pool's database."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from raffle.bootstrap import Raffle
from raffle.domain.activity import Activity, ActivityState
from raffle.domain.awards import Award, AwardKind
from raffle.domain.campaign import Campaign
from raffle.domain.draws import OrderState, RaffleOrder, Win
from raffle.domain.errors import Contention
from raffle.domain.fulfilment import (
    Address,
    CodePool,
    PoolStats,
    PrizeNotFound,
    ShipmentState,
)
from raffle.domain.strategy import Fallback, Strategy, StrategyPrize
from raffle.service import ids
from raffle.service.content import my_content
from raffle.service.effects import deliver_content, deliver_coupon, deliver_physical
from raffle.service.fulfilment import give_address, import_codes, pool_stats, ship
from raffle.service.fulfilment import shipments as shipments_in
from raffle.service.wins import my_wins
from raffle.settings import Settings
from tests.integration.raffles import wired

ACTIVITY, STRATEGY, THANKS, COUPON, CONTENT, LAMP = 1, 10, 1, 2, 3, 4
CODES = 100
NOW = datetime.now(UTC)
HOME = Address("张三", "138 0013 8000", "上海市 浦东新区", "世纪大道 100 号", "200120")
Deliverer = Callable[..., Awaitable[None]]  # (uow, *, order_id, user_id, award, now)


def campaign() -> Campaign:
    awards = (
        Award(THANKS, AwardKind.THANKS, "thanks"),
        Award(COUPON, AwardKind.COUPON, "30 元话费券", "phone-30"),
        Award(CONTENT, AwardKind.CONTENT, "付费课程", "course-1"),
        Award(LAMP, AwardKind.PHYSICAL, "小米台灯"),
    )
    prizes = (
        StrategyPrize(COUPON, Decimal("0.1"), CODES),
        StrategyPrize(CONTENT, Decimal("0.1")),
        StrategyPrize(LAMP, Decimal("0.1"), 10),
    )
    activity = Activity(
        ACTIVITY, "effects", STRATEGY, NOW - timedelta(days=1), NOW + timedelta(days=1),
        state=ActivityState.RUNNING,
    )  # fmt: skip
    pool = CodePool("phone-30", tuple(f"P30-{n:04d}" for n in range(CODES)))
    strategy = Strategy(STRATEGY, prizes, Fallback(THANKS))
    return Campaign(awards, (strategy,), activities=(activity,), code_pools=(pool,))


@pytest.fixture(params=["sqlite", "sqlite-2x4", "postgres", "mariadb"])
async def raffle(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    make_database_url: Callable[[str], Awaitable[str]],
) -> AsyncIterator[Raffle]:
    """SQLite alone (every shard on the pools' database), or two databases x 4 tables (users
    on the second claim codes in a transaction of their own)."""
    if request.param == "sqlite":
        settings = Settings(database_url=f"sqlite:///{tmp_path}/raffle.db")
    elif request.param == "sqlite-2x4":
        settings = Settings(
            database_url=f"sqlite:///{tmp_path}/raffle.db",
            shard_urls=f"sqlite:///{tmp_path}/shard.db",
            shard_tables=4,
        )
    else:
        first = await make_database_url(request.param)
        second = await make_database_url(request.param)
        settings = Settings(database_url=first, shard_urls=second, shard_tables=4)
    wired_raffle = await wired(settings, campaign())
    yield wired_raffle
    await wired_raffle.close()


def won(user: str, award_id: int, order_id: str | None = None) -> Win:
    order_id = order_id or ids.order_id(NOW)
    return Win(order_id, user, ACTIVITY, STRATEGY, award_id, None, "default", NOW)


async def record(raffle: Raffle, win: Win) -> None:
    order = RaffleOrder(win.order_id, win.user_id, ACTIVITY, STRATEGY, 1, OrderState.USED, NOW)
    async with raffle.shards.for_user(win.user_id) as uow:
        await uow.orders.add(order)
        await uow.wins.add(win)
        await uow.commit()


async def deliver(raffle: Raffle, deliverer: Deliverer, win: Win) -> None:
    """As the delivery pipeline does: in a transaction on the winner's shard, run again when
    the database dropped it to break a deadlock."""
    award = (await raffle.catalogue.awards())[win.award_id]
    for attempt in range(5):
        try:
            async with raffle.shards.for_user(win.user_id) as uow:
                await deliverer(
                    uow, order_id=win.order_id, user_id=win.user_id, award=award, now=NOW
                )
                await uow.commit()
            return
        except Contention:
            if attempt == 4:
                raise


async def outcomes(calls: list[Awaitable[None]]) -> Counter[str]:
    results = await asyncio.gather(*calls, return_exceptions=True)
    return Counter("ok" if r is None else getattr(r, "code", repr(r)) for r in results)


async def codes_of(raffle: Raffle, order_ids: list[str]) -> dict[str, str]:
    async with raffle.uow() as uow:
        return await uow.code_pools.for_orders(order_ids)


# --- coupons --------------------------------------------------------------------------


async def test_300_orders_at_once_share_100_codes_each_handed_out_once(raffle: Raffle) -> None:
    wins = [won(f"user-{n}", COUPON) for n in range(300)]

    counted = await outcomes([deliver(raffle, deliver_coupon, w) for w in wins])

    assert counted == {"ok": CODES, "code_pool_empty": 300 - CODES}
    handed = await codes_of(raffle, [w.order_id for w in wins])
    assert len(handed) == CODES
    assert len(set(handed.values())) == CODES  # no code twice
    assert await pool_stats(raffle.uow(), "phone-30") == [PoolStats("phone-30", CODES, CODES)]


async def test_one_order_delivered_50_times_at_once_gets_one_code(raffle: Raffle) -> None:
    win = won("xiaofuge", COUPON)

    counted = await outcomes([deliver(raffle, deliver_coupon, win) for _ in range(50)])

    assert counted == {"ok": 50}
    assert list(await codes_of(raffle, [win.order_id])) == [win.order_id]
    assert await pool_stats(raffle.uow()) == [PoolStats("phone-30", CODES, 1)]


async def test_a_claim_kept_after_the_shard_rolled_back_is_the_one_redelivered(
    raffle: Raffle,
) -> None:
    win = won("liergou", COUPON)
    award = (await raffle.catalogue.awards())[COUPON]
    async with raffle.shards.for_user(win.user_id) as uow:
        # ... and the worker dies: no commit
        await deliver_coupon(uow, order_id=win.order_id, user_id=win.user_id, award=award, now=NOW)
    first = await codes_of(raffle, [win.order_id])

    await deliver(raffle, deliver_coupon, win)

    after = await codes_of(raffle, [win.order_id])
    assert set(after) == {win.order_id}
    assert after == first or not first  # on the pools' database it rolled back with the shard
    assert (await pool_stats(raffle.uow()))[0].handed == 1


async def test_imported_codes_join_the_pool_once(raffle: Raffle) -> None:
    added, stats = await import_codes("phone-30", ["P30-0000", "NEW-1", "NEW-2"], raffle.uow())
    assert (added, stats) == (2, PoolStats("phone-30", CODES + 2, 0))
    added, _ = await import_codes("other", [f"O-{n}" for n in range(2500)], raffle.uow())
    assert added == 2500
    assert [p.name for p in await pool_stats(raffle.uow())] == ["other", "phone-30"]


# --- content --------------------------------------------------------------------------


async def test_content_granted_twice_and_at_once_is_granted_once(raffle: Raffle) -> None:
    win, again = won("xiaofuge", CONTENT), won("xiaofuge", CONTENT)

    counted = await outcomes([deliver(raffle, deliver_content, win) for _ in range(20)])
    await deliver(raffle, deliver_content, again)

    assert counted == {"ok": 20}
    grants = [h.grant for h in await my_content("xiaofuge", uow=raffle.uow, shards=raffle.shards)]
    assert [(g.content_id, g.order_id) for g in grants] == [("course-1", win.order_id)]
    assert [
        h.grant for h in await my_content("liergou", uow=raffle.uow, shards=raffle.shards)
    ] == []


# --- physical prizes ----------------------------------------------------------------------


async def test_a_shipment_is_opened_once_addressed_by_its_winner_only_and_shipped(
    raffle: Raffle,
) -> None:
    win = won("xiaofuge", LAMP)
    await record(raffle, win)
    counted = await outcomes([deliver(raffle, deliver_physical, win) for _ in range(20)])
    assert counted == {"ok": 20}

    async def address(user: str) -> object:
        return await give_address(
            user, win.order_id, HOME, catalogue=raffle.catalogue, shards=raffle.shards,
            clock=raffle.clock,
        )  # fmt: skip

    for intruder in ("liergou", "user001", "用户42"):  # on other shards, and maybe this one
        with pytest.raises(PrizeNotFound):
            await address(intruder)
        with pytest.raises(PrizeNotFound):
            await ship(intruder, win.order_id, None, shards=raffle.shards, clock=raffle.clock)
    (waiting,) = await shipments_in(ShipmentState.AWAITING_ADDRESS, None, 10, shards=raffle.shards)
    assert (waiting.order_id, waiting.address) == (win.order_id, None)

    await address("xiaofuge")
    shipped = await ship(
        "xiaofuge", win.order_id, "SF123", shards=raffle.shards, clock=raffle.clock
    )

    assert (shipped.state, shipped.address, shipped.tracking) == ("shipped", HOME, "SF123")
    assert await shipments_in(ShipmentState.READY, None, 10, shards=raffle.shards) == []


async def test_operators_page_through_ready_shipments_of_every_shard_by_order(
    raffle: Raffle,
) -> None:
    wins = [won(f"user-{n}", LAMP, ids.order_id(NOW + timedelta(seconds=n))) for n in range(12)]
    for win in wins:
        await record(raffle, win)
        await deliver(raffle, deliver_physical, win)
        await give_address(
            win.user_id, win.order_id, HOME, catalogue=raffle.catalogue, shards=raffle.shards,
            clock=raffle.clock,
        )  # fmt: skip

    pages, after = [], None
    while page := await shipments_in(ShipmentState.READY, after, 5, shards=raffle.shards):
        pages.append([s.order_id for s in page])
        after = page[-1].order_id

    assert [len(p) for p in pages] == [5, 5, 2]
    assert [o for p in pages for o in p] == [w.order_id for w in wins]


# --- my wins --------------------------------------------------------------------------


async def test_my_wins_carry_the_code_and_the_shipment(raffle: Raffle) -> None:
    coupon = won("xiaofuge", COUPON, ids.order_id(NOW))
    lamp = won("xiaofuge", LAMP, ids.order_id(NOW + timedelta(seconds=1)))
    for win, deliverer in ((coupon, deliver_coupon), (lamp, deliver_physical)):
        await record(raffle, win)
        await deliver(raffle, deliverer, win)

    page = await my_wins(
        "xiaofuge", None, None, 10, catalogue=raffle.catalogue, shards=raffle.shards,
        config=raffle.uow,
    )  # fmt: skip

    assert [p.order.order_id for p in page.prizes] == [lamp.order_id, coupon.order_id]
    assert page.prizes[0].shipment is not None
    assert page.prizes[0].shipment.state is ShipmentState.AWAITING_ADDRESS
    assert page.prizes[1].coupon_code == "P30-0000"
    assert page.next is None
