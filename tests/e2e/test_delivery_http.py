"""The embedded default end to end: a draw over HTTP is delivered in-process, and operators
see and send again what could not be delivered."""

from __future__ import annotations

import asyncio
import time

import pytest

from raffle.domain.awards import AwardKind
from raffle.domain.draws import OrderState, RaffleOrder, Win, WinState
from raffle.entrypoints.http.app import create_app
from raffle.service.deliverers import DELIVERERS
from raffle.service.delivery import won_message
from tests.e2e.conftest import ACTIVITY, Api


async def _records(api: Api, user: str) -> list[Win]:
    async with api.raffle.shards.for_user(user) as uow:
        return [w for _, w in await uow.orders.history(user, ACTIVITY, None, 100)]


async def _settled(api: Api, user: str, count: int) -> list[Win]:
    deadline = time.monotonic() + 30
    while True:
        records = await _records(api, user)
        if len(records) == count and all(w.state is not WinState.CREATE for w in records):
            return records
        assert time.monotonic() < deadline, f"not delivered in 30 s: {records}"
        await asyncio.sleep(0.05)


async def test_a_draw_over_http_is_delivered_in_process(api: Api) -> None:
    app = create_app(api.raffle)  # the lifespan runs relay, consumers and jobs in-process
    async with app.router.lifespan_context(app):
        auth = await api.login("dora")
        admin = await api.login("root", admin=True)
        for _ in range(3):
            drawn = await api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=auth)
            assert drawn.status_code == 201, drawn.text
        records = await _settled(api, "dora", 3)
        awards = await api.raffle.catalogue.awards()
        for win in records:
            wired = awards[win.award_id].kind in DELIVERERS
            assert win.state is (WinState.COMPLETED if wired else WinState.FAILED), win
        failed = (await api.client.get("/api/admin/deliveries/failed", headers=admin)).json()
        assert sorted(f["order_id"] for f in failed) == sorted(
            w.order_id for w in records if w.state is WinState.FAILED
        )
        report = (await api.client.get("/api/admin/deliveries/counts", headers=admin)).json()
        assert report["records"] == 3
        assert report["created"] == 0
        assert report["completed"] == report["delivered"] == 3 - len(failed)
        assert report["unpublished"] == 0
        prizes = (
            await api.client.get(f"/api/admin/deliveries/activities/{ACTIVITY}", headers=admin)
        ).json()
        assert sum(p["records"] for p in prizes) == 3
        assert sum(p["failed"] for p in prizes) == len(failed)
        assert all(p["consistent"] and p["created"] == 0 for p in prizes)


async def _settled_win(api: Api, user: str, order_id: str) -> Win:
    deadline = time.monotonic() + 30
    while True:
        async with api.raffle.shards.for_user(user) as uow:
            win = await uow.wins.get(order_id)
        if win is not None and win.state is not WinState.CREATE:
            return win
        assert time.monotonic() < deadline, f"not settled in 30 s: {win}"
        await asyncio.sleep(0.05)


async def test_a_failed_delivery_is_listed_and_sent_again(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no deliverer for a lamp (PHYSICAL) its delivery fails for good and is listed
    with why; once the deliverer is back, sending it again completes it (the reason
    cleared) and opens the shipment."""
    real = DELIVERERS[AwardKind.PHYSICAL]
    monkeypatch.delitem(DELIVERERS, AwardKind.PHYSICAL)
    awards = (await api.raffle.catalogue.awards()).values()
    lamp = next(a.id for a in awards if a.kind is AwardKind.PHYSICAL)
    now = api.raffle.clock.now()
    win = Win("0" * 24, "erin", ACTIVITY, 100001, lamp, None, "default", now)
    async with api.raffle.shards.for_user("erin") as uow:
        await uow.wins.add(win)
        await uow.outbox.add(won_message(win, now))
        await uow.commit()
    app = create_app(api.raffle)
    async with app.router.lifespan_context(app):
        admin = await api.login("root", admin=True)
        assert (await _settled_win(api, "erin", win.order_id)).state is WinState.FAILED
        listed = (await api.client.get("/api/admin/deliveries/failed", headers=admin)).json()
        assert [f["order_id"] for f in listed] == [win.order_id]
        # Why, as the last attempt recorded it: the stable code of the error it raised.
        why = {"code": "not_deliverable", "message": "no deliverer is wired for physical awards"}
        assert listed[0]["error"] == why
        url = "/api/admin/deliveries/failed?activity_id="
        mine = (await api.client.get(f"{url}{ACTIVITY}", headers=admin)).json()
        assert [f["order_id"] for f in mine] == [win.order_id]
        assert (await api.client.get(f"{url}{ACTIVITY + 1}", headers=admin)).json() == []
        unknown = await api.client.post("/api/admin/deliveries/nope/resend", headers=admin)
        assert (unknown.status_code, unknown.json()["code"]) == (404, "unknown_win")

        monkeypatch.setitem(DELIVERERS, AwardKind.PHYSICAL, real)
        sent = await api.client.post(f"/api/admin/deliveries/{win.order_id}/resend", headers=admin)
        assert (sent.status_code, sent.json()["state"]) == (200, "create")
        done = await _settled_win(api, "erin", win.order_id)
        assert (done.state, done.error) == (WinState.COMPLETED, None)  # the reason is gone
        async with api.raffle.shards.for_user("erin") as uow:
            assert await uow.shipments.get(win.order_id) is not None
        again = await api.client.post(f"/api/admin/deliveries/{win.order_id}/resend", headers=admin)
        assert (again.status_code, again.json()["code"]) == (409, "delivery_not_failed")
        assert (await api.client.get("/api/admin/deliveries/failed", headers=admin)).json() == []


async def test_a_points_win_reaches_the_players_balance_and_a_coupon_their_prizes(
    api: Api,
) -> None:
    """Wins recorded by a draw, delivered in-process: the points are on the balance, once, and
    the coupon's code is on the player's prize list."""
    awards = (await api.raffle.catalogue.awards()).values()
    fixed = next(a for a in awards if a.kind is AwardKind.POINTS)
    coupon = next(a for a in awards if a.kind is AwardKind.COUPON)
    now = api.raffle.clock.now()
    wins = [
        Win("1" * 24, "fay", ACTIVITY, 100001, fixed.id, None, "default", now),
        Win("2" * 24, "fay", ACTIVITY, 100001, coupon.id, None, "default", now),
    ]
    async with api.raffle.shards.for_user("fay") as uow:
        for n, win in enumerate(wins, start=1):
            order = RaffleOrder(win.order_id, "fay", ACTIVITY, 100001, n, OrderState.USED, now)
            await uow.orders.add(order)
            await uow.wins.add(win)
            await uow.outbox.add(won_message(win, now))
            await uow.outbox.add(won_message(win, now))  # published twice: delivered once
        await uow.commit()
    app = create_app(api.raffle)
    async with app.router.lifespan_context(app):
        auth = await api.login("fay")
        for win in wins:
            assert (await _settled_win(api, "fay", win.order_id)).state is WinState.COMPLETED
        points = (await api.client.get("/api/me/points", headers=auth)).json()
        assert points["balance"]["available"] == int(fixed.config)
        assert len(points["orders"]) == 1
        prizes = (await api.client.get("/api/me/prizes", headers=auth)).json()
        (won,) = [d for d in prizes["draws"] if d["order_id"] == wins[1].order_id]
        assert won["state"] == "completed"
        assert won["delivery"]["coupon_code"]
