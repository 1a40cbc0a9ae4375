"""The embedded default end to end: a draw over HTTP is delivered in-process, and operators
see and send again what could not be delivered."""

from __future__ import annotations

import asyncio
import time

import pytest

from raffle.domain.awards import AwardKind
from raffle.domain.draws import Win, WinState
from raffle.entrypoints.http.app import create_app
from raffle.service.deliverers import DELIVERERS, thanks
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
    """A lamp (PHYSICAL) has no deliverer on this branch: its delivery fails for good and is
    listed; once a deliverer is registered, sending it again completes it."""
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
        unknown = await api.client.post("/api/admin/deliveries/nope/resend", headers=admin)
        assert (unknown.status_code, unknown.json()["code"]) == (404, "unknown_win")

        monkeypatch.setitem(DELIVERERS, AwardKind.PHYSICAL, thanks)
        sent = await api.client.post(f"/api/admin/deliveries/{win.order_id}/resend", headers=admin)
        assert (sent.status_code, sent.json()["state"]) == (200, "create")
        assert (await _settled_win(api, "erin", win.order_id)).state is WinState.COMPLETED
        again = await api.client.post(f"/api/admin/deliveries/{win.order_id}/resend", headers=admin)
        assert (again.status_code, again.json()["code"]) == (409, "delivery_not_failed")
        assert (await api.client.get("/api/admin/deliveries/failed", headers=admin)).json() == []
