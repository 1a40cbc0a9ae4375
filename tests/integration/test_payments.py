"""Payments end to end on every backend (SQLite; PostgreSQL and MariaDB with Redis) against
the Alipay simulator: notifications recorded once and applied once, tampered ones refused,
duplicate payments refunded once, one precreate for many QR requests, expiry."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from raffle.adapters.alipay.signing import NOTIFICATION_UNSIGNED, private_key, sign, signing_string
from raffle.adapters.qr_codes import PREFIX as QR_PREFIX
from raffle.domain.payments import (
    REFUND_ATTEMPTS,
    TIMEOUT,
    Change,
    OrderState,
    PaymentOrder,
    PaymentState,
)
from raffle.service import payment_desk as desk
from raffle.service import payments as use
from raffle.service.auth import create_user
from raffle.service.payment_jobs import REFUND_AFTER, expire, reconcile, refunds
from raffle.service.payment_notices import receive
from raffle.settings import Settings
from tests.alipay_world import NotifyUrl, Sim
from tests.integration.payment_world import PRICE, Shop, alipay_settings, eventually, shop, working
from tests.integration.raffles import SettableClock
from tests.integration.redis_clients import redis_settings

PRECREATE, CLOSE, REFUND = "alipay.trade.precreate", "alipay.trade.close", "alipay.trade.refund"


@pytest.fixture
def clock() -> SettableClock:
    return SettableClock()


@pytest.fixture(params=["sqlite", "postgres+redis", "mariadb+redis"])
async def world(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    make_database_url: Callable[[str], Awaitable[str]],
    sim: Sim,
    sink: NotifyUrl,
    merchant: rsa.RSAPrivateKey,
    clock: SettableClock,
) -> AsyncIterator[Shop]:
    values: dict[str, object] = alipay_settings(sim, merchant, sink)
    if request.param == "sqlite":
        values["database_url"] = f"sqlite:///{tmp_path}/raffle.db"
    else:
        backend, kind = request.param.split("+")
        values |= {
            "database_url": await make_database_url(backend),
            "shard_urls": await make_database_url(backend),
            "shard_tables": 4,
            **await redis_settings(request, kind),
        }
    made = await shop(Settings(**values), sim, sink, clock)
    try:
        yield made
    finally:
        await made.api.aclose()
        await made.raffle.close()


async def _held(world: Shop, user_id: str) -> bool:
    async with world.raffle.shards.for_user(user_id) as uow:
        return await uow.grants.get(user_id, "course-1") is not None


async def test_the_same_notification_100_times_at_once_pays_once(world: Shop) -> None:
    order = await world.shown("alice")
    (form,) = await world.paid(order)
    replies = await asyncio.gather(*(world.notify(form) for _ in range(100)))
    assert set(replies) == {"success"}
    assert await world.counts(order) == (1, 1)  # one payment recorded, one message
    async with working(world.raffle):
        await eventually(lambda: _state_is(world, order, OrderState.PAID))
        await asyncio.sleep(0.3)  # redeliveries, if any, would act now
    found = await world.order_now(order)
    assert found.trade_no == form["trade_no"]
    file = await _history(world, order)
    assert [c.to_state for c in file] == [OrderState.CREATED, OrderState.PAYING, OrderState.PAID]
    async with world.raffle.shards.for_user("alice") as uow:
        grants = await uow.grants.of_user("alice")
        payments = await uow.payments.payments_of(order.out_trade_no)
    assert [(g.content_id, g.order_id) for g in grants] == [("course-1", order.out_trade_no)]
    assert [p.state for p in payments] == [PaymentState.APPLIED]
    assert (await reconcile(world.ctx)).clean


TAMPERED = {
    "sign": lambda f: {**f, "sign": f["sign"][:-8] + "AAAAAAA="},
    "app_id": lambda f: {**f, "app_id": "2021000000000999"},
    "seller_id": lambda f: {**f, "seller_id": "2088000000000999"},
    "out_trade_no": lambda f: {**f, "out_trade_no": "ffffffffffffffffffffffff_0"},
    "total_amount": lambda f: {**f, "total_amount": "0.01"},
    "trade_status": lambda f: {**f, "trade_status": "WAIT_BUYER_PAY"},
    "unsigned": lambda f: {k: v for k, v in f.items() if k not in ("sign", "sign_type")},
}


async def test_a_tampered_or_unsigned_notification_fails_and_changes_nothing(
    world: Shop, sim: Sim, merchant: rsa.RSAPrivateKey
) -> None:
    """Each field changed after signing breaks the signature; so that the other checks are
    proven too, each is also sent signed again (as a forger holding a key would) except the
    signature and the unsigned one themselves."""
    order = await world.shown("bob")
    (form,) = await world.paid(order)
    for name, tamper in TAMPERED.items():
        assert await world.notify(tamper(form)) == "failure", name
        if name not in ("sign", "unsigned"):
            assert await world.notify(_signed(tamper(form), sim)) == "failure", name
    assert await world.counts(order) == (0, 0)
    assert (await world.order_now(order)).state is OrderState.PAYING
    assert not await _held(world, "bob")
    assert await world.notify(form) == "success"  # the untouched one still counts


async def test_a_second_payment_of_the_content_is_refunded_once(world: Shop, sim: Sim) -> None:
    """The simulator pays one order twice (two gateway trades, notified at once): whichever
    is applied first pays the order, the other is refunded, once."""
    order = await world.shown("carol")
    forms = await world.paid(order, times=2)
    assert {await world.notify(form) for form in forms} == {"success"}
    async with working(world.raffle):
        await eventually(lambda: _refunds_at(sim, 1))
        await eventually(
            lambda: _payments_are(world, order, {PaymentState.APPLIED, PaymentState.REFUNDED})
        )
        await asyncio.sleep(0.3)
    found = await world.order_now(order)
    (refunded,) = {f["trade_no"] for f in forms} - {found.trade_no}
    refunds = await sim.refunds()
    assert [(r["trade_no"], r["out_request_no"]) for r in refunds] == [(refunded, f"R{refunded}")]
    assert found.state is OrderState.PAID
    assert await _held(world, "carol")


async def test_50_qr_requests_at_once_precreate_once_and_payment_drops_the_qr(
    world: Shop, sim: Sim, clock: SettableClock
) -> None:
    """50 requests of the player's browser at once, for the SVG and the PNG alike: one
    precreate at the simulator, one QR for all, cached for the order's 30 minutes; the
    payment drops it and the QR is then refused."""
    order = await world.ordered("dave")
    player = await _signed_in(world, "dave")
    path = f"/api/payments/orders/{order.out_trade_no}/qr"
    paths = [path, f"{path}.png"]
    answers = await asyncio.gather(
        *(world.api.get(paths[i % 2], headers=player) for i in range(50))
    )
    assert [a.status_code for a in answers] == [200] * 50
    svgs, pngs = answers[0::2], answers[1::2]
    assert len({a.json()["qr_code"] for a in svgs}) == 1
    assert {a.headers["content-type"] for a in pngs} == {"image/png"}
    assert len({a.content for a in pngs}) == 1
    assert (await sim.calls()).get(PRECREATE) == 1
    code = svgs[0].json()["qr_code"]
    assert await world.ctx.qr.get(order.out_trade_no) == code
    await _cached_for_30_minutes(world, order, clock)
    (form,) = await world.paid(order)
    assert await world.notify(form) == "success"
    async with working(world.raffle):
        await eventually(lambda: _state_is(world, order, OrderState.PAID))
    assert await world.ctx.qr.get(order.out_trade_no) is None
    after = await world.api.get(path, headers=player)
    assert (after.status_code, after.json()["code"]) == (409, "payment_order_not_open")
    assert (await sim.calls()).get(PRECREATE) == 1


async def _signed_in(world: Shop, name: str, *, admin: bool = False) -> dict[str, str]:
    await create_user(name, "a long password", admin, world.raffle.uow(), world.raffle.hasher)
    login = await world.api.post(
        "/api/auth/login", json={"name": name, "password": "a long password"}
    )
    return {"Authorization": f"Bearer {login.json()['token']}"}


async def _cached_for_30_minutes(world: Shop, order: PaymentOrder, clock: SettableClock) -> None:
    """Kept for the order's timeout_express: in Redis with that expiry; in the process's
    memory until the (injected) clock reaches it."""
    number, code = order.out_trade_no, await world.ctx.qr.get(order.out_trade_no)
    assert code is not None
    if world.raffle.redis is not None:
        left = await world.raffle.redis.ttl(QR_PREFIX + number)
        assert TIMEOUT.total_seconds() - 60 < left <= TIMEOUT.total_seconds()
        return
    start = clock.current
    try:
        clock.current = start + TIMEOUT - timedelta(seconds=1)
        assert await world.ctx.qr.get(number) == code
        clock.current = start + TIMEOUT
        assert await world.ctx.qr.get(number) is None
    finally:
        clock.current = start
    await world.ctx.qr.put(number, code, int(TIMEOUT.total_seconds()))  # as it was


async def test_an_order_unpaid_at_30_minutes_is_closed_and_a_late_payment_refunded(
    world: Shop, sim: Sim, clock: SettableClock
) -> None:
    """Erin's order, and one more on each other shard: all closed by one run of the job."""
    order = await world.shown("erin")
    orders = [order, *await _one_on_each_other_shard(world, order)]
    for each in orders:
        await _scan(world, each)  # a buyer scanned it: the gateway has a trade to close
    clock.current += timedelta(minutes=29)
    assert await expire(world.ctx) == 0
    clock.current += timedelta(minutes=1, seconds=1)
    assert await expire(world.ctx) == len(orders)
    for each in orders:
        assert (await world.order_now(each)).state is OrderState.CLOSED
        assert (await sim.trade(each.out_trade_no))["status"] == "TRADE_CLOSED"
        assert await world.ctx.qr.get(each.out_trade_no) is None
    assert (await sim.calls()).get(CLOSE) == len(orders)
    (form,) = await world.paid(order, late=True)
    assert await world.notify(form) == "success"
    async with working(world.raffle):
        await eventually(lambda: _state_is(world, order, OrderState.REFUNDED))
    assert [r["trade_no"] for r in await sim.refunds()] == [form["trade_no"]]
    history = [(c.to_state, c.cause.value) for c in await _history(world, order)]
    assert history[-3:] == [
        (OrderState.CLOSED, "expired"),
        (OrderState.REFUNDING, "paid_when_closed"),
        (OrderState.REFUNDED, "refunded"),
    ]
    assert not await _held(world, "erin")


async def _one_on_each_other_shard(world: Shop, first: PaymentOrder) -> list[PaymentOrder]:
    """Shown orders of other players, one on each shard but the first order's."""
    shards = world.raffle.shards
    wanted = set(range(len(shards.every()))) - {shards.index(first.user_id)}
    made: list[PaymentOrder] = []
    for n in range(1000):
        if not wanted:
            return made
        if (index := shards.index(user := f"erin-{n}")) in wanted:
            wanted.discard(index)
            made.append(await world.shown(user))
    raise AssertionError(f"no player found for shards {sorted(wanted)}")


async def test_a_crash_after_recording_before_success_records_once(world: Shop) -> None:
    """The process dies after the commit, before answering: the gateway hears no
    `success` and notifies again, which is answered `success` and records nothing more."""
    order = await world.shown("frank")
    (form,) = await world.paid(order)

    async def crash(point: str) -> None:
        if point == "notify.recorded":
            raise ConnectionResetError(point)

    with pytest.raises(ConnectionResetError):
        await receive(form, world.raffle.payments(crash))
    assert await world.notify(form) == "success"
    assert await world.counts(order) == (1, 1)


async def test_an_open_order_is_reused_and_the_amount_is_fixed_at_creation(world: Shop) -> None:
    first = await world.ordered("gina")
    again = await asyncio.gather(*(world.ordered("gina") for _ in range(20)))
    assert {o.out_trade_no for o in again} == {first.out_trade_no}
    assert first.amount_cents == PRICE


async def _scan(world: Shop, order: PaymentOrder) -> None:
    """Open the QR's page as a buyer's phone would: the gateway now has a trade."""
    code = await world.ctx.qr.get(order.out_trade_no)
    assert code is not None
    async with httpx.AsyncClient(timeout=10) as phone:
        (await phone.get(code)).raise_for_status()


def _signed(form: dict[str, str], sim: Sim) -> dict[str, str]:
    """The form signed again with the simulator's own key, as a forger with it would."""
    key = private_key(sim.key_file.read_text())
    fields = {k: v for k, v in form.items() if k not in NOTIFICATION_UNSIGNED}
    signature = sign(key, signing_string(fields, NOTIFICATION_UNSIGNED))
    return {**fields, "sign_type": "RSA2", "sign": signature}


async def _state_is(world: Shop, order: PaymentOrder, state: OrderState) -> bool:
    return (await world.order_now(order)).state is state


async def _payments_are(world: Shop, order: PaymentOrder, states: set[PaymentState]) -> bool:
    async with world.raffle.shards.for_user(order.user_id) as uow:
        found = await uow.payments.payments_of(order.out_trade_no)
    return {p.state for p in found} == states and len(found) == len(states)


async def _refund_tried(world: Shop, order: PaymentOrder) -> bool:
    async with world.raffle.shards.for_user(order.user_id) as uow:
        found = await uow.payments.payments_of(order.out_trade_no)
    return any(p.state is PaymentState.REFUNDING and p.attempts == 1 for p in found)


async def _refunds_at(sim: Sim, count: int) -> bool:
    return len(await sim.refunds()) >= count


async def _history(world: Shop, order: PaymentOrder) -> list[Change]:
    uow = world.ctx.shard(order.out_trade_no)
    assert uow is not None
    async with uow:
        return await uow.payments.history(order.out_trade_no)


async def test_a_refund_that_keeps_failing_is_parked_with_its_error_and_retried_by_hand(
    world: Shop, sim: Sim, clock: SettableClock
) -> None:
    order = await world.shown("hugo")
    forms = await world.paid(order, times=2)
    await sim.fail(REFUND, "unavailable", times=REFUND_ATTEMPTS)
    assert {await world.notify(form) for form in forms} == {"success"}
    async with working(world.raffle):
        await eventually(lambda: _refund_tried(world, order))  # by the consumer, at once
    for _ in range(REFUND_ATTEMPTS - 1):  # the refund job's later attempts
        clock.current += REFUND_AFTER + timedelta(seconds=1)
        assert await refunds(world.ctx) == 0
    (parked,) = await desk.refunds(world.ctx, PaymentState.REFUND_FAILED)
    assert parked.attempts == REFUND_ATTEMPTS
    assert parked.last_error is not None
    assert parked.last_error.startswith("gateway_unavailable")
    assert await sim.refunds() == []
    admin = await _operator(world)
    path = f"/api/admin/payments/orders/{order.out_trade_no}/payments/{parked.trade_no}/refund"
    retried = await world.api.post(path, headers=admin)
    assert retried.status_code == 200, retried.text
    assert (retried.json()["state"], retried.json()["last_error"]) == ("refunded", None)
    assert [r["trade_no"] for r in await sim.refunds()] == [parked.trade_no]
    again = await world.api.post(path, headers=admin)
    assert (again.status_code, again.json()["code"]) == (409, "refund_not_failed")
    assert len(await sim.refunds()) == 1


async def _operator(world: Shop) -> dict[str, str]:
    return {**await _signed_in(world, "ops", admin=True), "Idempotency-Key": "retry-1"}


async def test_a_new_orders_qr_first_closes_an_old_qr_scanned_after_it_was_cancelled(
    world: Shop, sim: Sim
) -> None:
    """Seed 000's first remedy. A QR never scanned cannot be closed at the gateway, so a
    cancelled order's QR stays payable there; once a buyer has scanned it, the next order of
    the same content closes it before showing its own QR."""
    old = await world.shown("iris")
    code = await world.ctx.qr.get(old.out_trade_no)
    assert (await use.cancel("iris", old.out_trade_no, world.ctx)).state is OrderState.CLOSED
    assert await world.ctx.qr.get(old.out_trade_no) is None
    async with httpx.AsyncClient(timeout=10) as phone:  # scanned after the cancel
        assert code is not None
        (await phone.get(code)).raise_for_status()
    assert (await sim.trade(old.out_trade_no))["status"] == "WAIT_BUYER_PAY"
    new = await world.shown("iris")
    assert new.out_trade_no != old.out_trade_no
    assert (await sim.trade(old.out_trade_no))["status"] == "TRADE_CLOSED"
    assert (await world.order_now(new)).state is OrderState.PAYING
