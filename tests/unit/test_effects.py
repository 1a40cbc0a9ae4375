"""Delivering coupons, content and physical prizes, and what players and operators do after."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from raffle.domain.awards import Award, AwardKind
from raffle.domain.draws import OrderState, RaffleOrder, Win
from raffle.domain.fulfilment import (
    Address,
    CodePoolEmpty,
    IllegalShipment,
    InvalidAddress,
    InvalidCodes,
    PoolStats,
    PrizeNotFound,
    Shipment,
    ShipmentState,
)
from raffle.service.content import my_content
from raffle.service.effects import deliver_content, deliver_coupon, deliver_physical
from raffle.service.fulfilment import (
    give_address,
    import_codes,
    pool_stats,
    ship,
    shipments,
)
from raffle.service.wins import my_wins
from tests.unit.fakes import FakeShards
from tests.unit.usecase_world import ACTIVITY, STRATEGY, THANKS, World, world

COUPON, CONTENT, LAMP = 3, 4, 5
T0 = datetime(2026, 11, 21, 12, tzinfo=UTC)
HOME = Address("张三", "138 0013 8000", "上海市 浦东新区", "世纪大道 100 号 8 楼", "200120")


def effects_world() -> World:
    w = world()
    w.config.awards |= {
        COUPON: Award(COUPON, AwardKind.COUPON, "30 off", "phone-30"),
        CONTENT: Award(CONTENT, AwardKind.CONTENT, "a course", "course-1"),
        LAMP: Award(LAMP, AwardKind.PHYSICAL, "lamp"),
    }
    w.shards = FakeShards(w.config)  # code pools live in the configuration store
    w.config.codes["phone-30"] = dict.fromkeys(["C-1", "C-2"])
    return w


def win(order_id: str, award_id: int, user: str = "alice", n: int = 0) -> Win:
    at = T0 + timedelta(seconds=n)
    return Win(order_id, user, ACTIVITY, STRATEGY, award_id, None, "default", at)


async def recorded(w: World, *wins: Win) -> None:
    """The draws that won them, as the draw leaves them."""
    async with w.shards.for_user("any") as uow:
        for n, v in enumerate(wins):
            order = RaffleOrder(
                v.order_id, v.user_id, ACTIVITY, STRATEGY, n + 1, OrderState.USED, v.created_at
            )
            await uow.orders.add(order)
            await uow.wins.add(v)
        await uow.commit()


async def addressed(w: World, user: str, order_id: str) -> Shipment:
    return await give_address(
        user, order_id, HOME, catalogue=w.catalogue, shards=w.shards, clock=w.clock
    )


async def deliver(w: World, v: Win, *, commit: bool = True) -> None:
    deliverers = {
        AwardKind.COUPON: deliver_coupon,
        AwardKind.CONTENT: deliver_content,
        AwardKind.PHYSICAL: deliver_physical,
    }
    award = w.config.awards[v.award_id]
    async with w.shards.for_user(v.user_id) as uow:
        await deliverers[award.kind](
            uow, order_id=v.order_id, user_id=v.user_id, award=award, now=T0
        )
        if commit:
            await uow.commit()


# --- coupons --------------------------------------------------------------------------


async def test_each_order_gets_its_own_code_and_keeps_it_on_redelivery() -> None:
    w = effects_world()
    first, second = win("o1", COUPON), win("o2", COUPON, user="bob")

    await deliver(w, first)
    await deliver(w, first)
    await deliver(w, second)

    assert w.config.codes["phone-30"] == {"C-1": ("o1", "alice"), "C-2": ("o2", "bob")}


async def test_a_claim_outlives_a_delivery_that_did_not_commit() -> None:
    w = effects_world()
    await deliver(w, win("o1", COUPON), commit=False)  # the worker died before its commit
    await deliver(w, win("o1", COUPON))

    assert w.config.codes["phone-30"] == {"C-1": ("o1", "alice"), "C-2": None}


async def test_an_empty_pool_fails_the_delivery_with_a_stable_code() -> None:
    w = effects_world()
    await deliver(w, win("o1", COUPON))
    await deliver(w, win("o2", COUPON))

    with pytest.raises(CodePoolEmpty, match="phone-30") as error:
        await deliver(w, win("o3", COUPON))

    assert error.value.code == "code_pool_empty"
    assert {h[0] for h in w.config.codes["phone-30"].values() if h} == {"o1", "o2"}


async def test_a_deliverer_refuses_an_award_of_another_kind() -> None:
    w = effects_world()
    lamp = w.config.awards[LAMP]
    with pytest.raises(ValueError, match="not coupon"):
        async with w.shards.for_user("alice") as uow:
            await deliver_coupon(uow, order_id="o1", user_id="alice", award=lamp, now=T0)


async def test_codes_are_imported_once_and_counted() -> None:
    w = effects_world()
    added, stats = await import_codes("phone-30", ["C-2", "C-3", "C-4"], w.uow())
    assert (added, stats) == (2, PoolStats("phone-30", 4, 0))
    await deliver(w, win("o1", COUPON))

    assert await pool_stats(w.uow()) == [PoolStats("phone-30", 4, 1)]
    assert await pool_stats(w.uow(), "nothing-yet") == [PoolStats("nothing-yet", 0, 0)]
    assert (await pool_stats(w.uow()))[0].free == 3


@pytest.mark.parametrize(
    ("pool", "codes", "message"),
    [
        ("phone 30", ["C-9"], "pool: a pool name"),
        ("phone-30", [], "codes: give 1 to 10,000"),
        ("phone-30", ["C-9", "C 10"], "codes.1: a code is"),
        ("phone-30", ["C-9", "C-9"], "codes.1: code 'C-9' is listed twice"),
        ("phone-30", ["x" * 129], "codes.0: a code is 1-128"),
    ],
)
async def test_bad_codes_are_refused_and_nothing_is_stored(
    pool: str, codes: list[str], message: str
) -> None:
    w = effects_world()
    with pytest.raises(InvalidCodes, match=message):
        await import_codes(pool, codes, w.uow())
    assert w.config.codes == {"phone-30": {"C-1": None, "C-2": None}}


# --- content --------------------------------------------------------------------------


async def test_content_is_granted_once() -> None:
    w = effects_world()
    await deliver(w, win("o1", CONTENT))
    await deliver(w, win("o1", CONTENT))
    await deliver(w, win("o2", CONTENT))  # the same content won again: held already

    grants = [h.grant for h in await my_content("alice", uow=w.uow, shards=w.shards)]
    assert [(g.content_id, g.order_id) for g in grants] == [("course-1", "o1")]
    assert [h.grant for h in await my_content("bob", uow=w.uow, shards=w.shards)] == []


# --- physical prizes ----------------------------------------------------------------------


async def test_a_shipment_goes_from_awaiting_an_address_to_shipped() -> None:
    w = effects_world()
    lamp = win("o1", LAMP)
    await recorded(w, lamp)
    await deliver(w, lamp)
    await deliver(w, lamp)
    (waiting,) = await shipments(ShipmentState.AWAITING_ADDRESS, None, 10, shards=w.shards)
    assert (waiting.order_id, waiting.address) == ("o1", None)
    with pytest.raises(IllegalShipment, match="only a ready shipment ships"):
        await ship("alice", "o1", None, shards=w.shards, clock=w.clock)

    ready = await addressed(w, "alice", "o1")
    assert (ready.state, ready.address) == (ShipmentState.READY, HOME)
    assert await shipments(ShipmentState.READY, None, 10, shards=w.shards) == [ready]
    done = await ship("alice", "o1", "SF1234567890", shards=w.shards, clock=w.clock)

    assert (done.state, done.tracking, done.address) == (
        ShipmentState.SHIPPED,
        "SF1234567890",
        HOME,
    )
    with pytest.raises(IllegalShipment, match="has shipped") as error:
        await addressed(w, "alice", "o1")
    assert error.value.current is ShipmentState.SHIPPED
    with pytest.raises(IllegalShipment):
        await ship("alice", "o1", None, shards=w.shards, clock=w.clock)


async def test_an_address_given_before_delivery_is_kept_by_it() -> None:
    w = effects_world()
    lamp = win("o1", LAMP)
    await recorded(w, lamp)
    await addressed(w, "alice", "o1")
    await deliver(w, lamp)

    (shipment,) = w.shards.store.shipments.values()
    assert (shipment.state, shipment.address) == (ShipmentState.READY, HOME)


@pytest.mark.parametrize(
    ("user", "order_id"),
    [("bob", "o1"), ("alice", "missing"), ("alice", "o2")],
    ids=["another user's order", "no such order", "not a physical prize"],
)
async def test_only_my_own_physical_prize_takes_an_address(user: str, order_id: str) -> None:
    w = effects_world()
    await recorded(w, win("o1", LAMP), win("o2", COUPON, n=1))

    with pytest.raises(PrizeNotFound):
        await addressed(w, user, order_id)
    assert w.shards.store.shipments == {}


async def test_operators_ship_only_the_named_users_shipment() -> None:
    w = effects_world()
    lamp = win("o1", LAMP)
    await recorded(w, lamp)
    await deliver(w, lamp)
    await addressed(w, "alice", "o1")

    for user, order_id in [("bob", "o1"), ("alice", "o2")]:
        with pytest.raises(PrizeNotFound):
            await ship(user, order_id, None, shards=w.shards, clock=w.clock)
    assert w.shards.store.shipments["o1"].state is ShipmentState.READY


def test_an_address_names_every_bad_field() -> None:
    with pytest.raises(InvalidAddress) as error:
        Address(" ", "call me", "上海", "x" * 256, "<script>")
    assert [field for field, _ in error.value.problems] == ["name", "phone", "line", "postcode"]
    assert error.value.code == "invalid_address"
    assert Address("李四", "+86 138-0013-8000", "北京", "1 号").postcode == ""


# --- my wins ------------------------------------------------------------------------------


async def test_my_wins_show_each_delivery_newest_first_a_page_at_a_time() -> None:
    w = effects_world()
    wins = [
        win("o1", COUPON),
        win("o2", CONTENT, n=1),
        win("o3", LAMP, n=2),
        win("o4", THANKS, n=3),
    ]
    await recorded(w, *wins, win("o5", LAMP, user="bob", n=4))
    for v in wins[:3]:
        await deliver(w, v)

    async def page(before: str | None) -> tuple[list[tuple[str, str | None, bool]], str | None]:
        found = await my_wins(
            "alice", None, before, 3, catalogue=w.catalogue, shards=w.shards, config=w.uow
        )
        rows = [(p.order.order_id, p.coupon_code, p.shipment is not None) for p in found.prizes]
        return rows, found.next

    first, cursor = await page(None)
    assert first == [("o4", None, False), ("o3", None, True), ("o2", None, False)]
    assert cursor == "o2"
    assert await page(cursor) == ([("o1", "C-1", False)], None)
