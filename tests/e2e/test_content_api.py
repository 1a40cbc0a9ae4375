"""Paid content over HTTP: operators write it and put it on sale; a player without a grant
gets the preview and 402 `payment_required` with the price; a content prize won in a draw
and delivered by the in-process pipeline opens the body."""

from __future__ import annotations

import asyncio
import time

from raffle.domain.awards import AwardKind
from raffle.domain.draws import OrderState, RaffleOrder, Win, WinState
from raffle.entrypoints.http.app import create_app
from raffle.service.delivery import won_message
from tests.e2e.conftest import ACTIVITY, Api

COURSE = {
    "id": "course-1",  # what the demo campaign's content prize names
    "title": "抽奖系统设计 · 第一讲",
    "summary": "奖品、概率与库存",
    "body": "## 概率\n\n每个奖品的概率是**精确**的。<script>alert(1)</script>",
    "preview": "本讲介绍[策略](javascript:alert(1))的组成。",
    "cover": "https://example.com/covers/1.png",
    "price_cents": 990,
}


async def on_sale(api: Api, admin: dict[str, str], course: dict[str, object]) -> None:
    made = await api.client.post("/api/admin/content", headers=admin, json=course)
    assert made.status_code == 200, made.text
    url = f"/api/admin/content/{course['id']}/state"
    moved = await api.client.post(url, headers=admin, json={"state": "on_sale"})
    assert moved.status_code == 200, moved.text


async def test_operators_write_content_and_put_it_on_sale(api: Api) -> None:
    admin, alice = await api.login("root", admin=True), await api.login("alice")
    key = {**admin, "Idempotency-Key": "create-1"}
    made = await api.client.post("/api/admin/content", headers=key, json=COURSE)
    replayed = await api.client.post("/api/admin/content", headers=key, json=COURSE)
    taken = await api.client.post("/api/admin/content", headers=admin, json=COURSE)
    assert (made.json()["state"], made.json()["body"]) == ("draft", COURSE["body"])
    assert replayed.headers["Idempotent-Replayed"] == "true"
    assert (taken.status_code, taken.json()["code"]) == (409, "content_exists")

    url = "/api/admin/content/course-1"
    edited = await api.client.put(url, headers=admin, json=COURSE)
    assert (edited.status_code, edited.json()["code"]) == (422, "invalid_input")  # no id here
    text = {k: v for k, v in COURSE.items() if k != "id"}
    edited = await api.client.put(url, headers=admin, json={**text, "price_cents": 1200})
    assert edited.json()["price_cents"] == 1200
    off = await api.client.post(f"{url}/state", headers=admin, json={"state": "off_sale"})
    assert (off.status_code, off.json()["code"]) == (409, "illegal_content_state")
    assert off.json()["current_state"] == "draft"
    on = await api.client.post(f"{url}/state", headers=admin, json={"state": "on_sale"})
    assert on.json()["state"] == "on_sale"
    free = await api.client.put(url, headers=admin, json={**text, "price_cents": 0})
    assert (free.status_code, free.json()["code"]) == (422, "invalid_content")
    assert [e["at"] for e in free.json()["errors"]] == ["price_cents"]

    listed = (await api.client.get("/api/admin/content", headers=admin)).json()
    assert [(c["id"], c["state"], c["price_cents"]) for c in listed] == [
        ("course-1", "on_sale", 1200)
    ]
    forbidden = await api.client.get("/api/admin/content", headers=alice)
    assert (forbidden.status_code, forbidden.json()["code"]) == (403, "forbidden")


async def test_bad_content_is_refused_naming_each_field_and_nothing_is_stored(api: Api) -> None:
    admin = await api.login("root", admin=True)
    bad = {**COURSE, "title": " ", "cover": "http://example.com/c.png"}
    refused = await api.client.post("/api/admin/content", headers=admin, json=bad)
    slash = await api.client.post("/api/admin/content", headers=admin, json={**COURSE, "id": "a/b"})
    missing = await api.client.get("/api/admin/content/nope", headers=admin)

    assert (refused.status_code, refused.json()["code"]) == (422, "invalid_content")
    assert [e["at"] for e in refused.json()["errors"]] == ["title", "cover"]
    assert (slash.status_code, slash.json()["code"]) == (422, "invalid_input")
    assert (missing.status_code, missing.json()["code"]) == (404, "unknown_content")
    assert (await api.client.get("/api/admin/content", headers=admin)).json() == []


async def test_the_editors_preview_renders_markdown_inert(api: Api) -> None:
    admin = await api.login("root", admin=True)
    markdown = "**b** <img src=x onerror=alert(1)> [x](javascript:alert(1))"
    answer = await api.client.post(
        "/api/admin/content/preview", headers=admin, json={"markdown": markdown}
    )
    html = answer.json()["html"]
    assert "<strong>b</strong>" in html
    assert "<img" not in html
    assert "href" not in html


async def test_a_player_without_a_grant_gets_the_preview_and_the_price(api: Api) -> None:
    admin, bob = await api.login("root", admin=True), await api.login("bob")
    await on_sale(api, admin, COURSE)
    draft = {**COURSE, "id": "draft-1"}
    assert (await api.client.post("/api/admin/content", headers=admin, json=draft)).is_success

    cards = (await api.client.get("/api/content")).json()
    page = await api.client.get("/api/content/course-1", headers=bob)
    body = await api.client.get("/api/content/course-1/body", headers=bob)
    hidden = await api.client.get("/api/content/draft-1", headers=bob)
    anonymous = await api.client.get("/api/content/course-1/body")

    assert cards == [
        {k: COURSE[k] for k in ("id", "title", "summary", "cover", "price_cents")} | {"buy": None}
    ]
    assert page.json()["held"] is False
    assert page.json()["preview_html"] == "<p>本讲介绍[策略](javascript:alert(1))的组成。</p>\n"
    assert body.status_code == 402
    assert body.headers["content-type"] == "application/problem+json"
    problem = body.json()
    assert (problem["code"], problem["price_cents"], problem["content_id"]) == (
        "payment_required",
        990,
        "course-1",
    )
    assert "body_html" not in problem
    assert "精确" not in body.text
    assert (hidden.status_code, hidden.json()["code"]) == (404, "unknown_content")
    assert anonymous.status_code == 401


async def _settled(api: Api, user: str, order_id: str) -> Win:
    deadline = time.monotonic() + 30
    while True:
        async with api.raffle.shards.for_user(user) as uow:
            win = await uow.wins.get(order_id)
        if win is not None and win.state is not WinState.CREATE:
            return win
        assert time.monotonic() < deadline, f"not delivered in 30 s: {win}"
        await asyncio.sleep(0.05)


async def test_a_content_prize_won_and_delivered_opens_the_body(api: Api) -> None:
    admin, carol = await api.login("root", admin=True), await api.login("carol")
    await on_sale(api, admin, COURSE)
    content = next(
        a for a in (await api.raffle.catalogue.awards()).values() if a.kind is AwardKind.CONTENT
    )
    now = api.raffle.clock.now()
    win = Win("7" * 24, "carol", ACTIVITY, 100001, content.id, None, "default", now)
    async with api.raffle.shards.for_user("carol") as uow:  # as a draw leaves it
        await uow.orders.add(
            RaffleOrder(win.order_id, "carol", ACTIVITY, 100001, 1, OrderState.USED, now)
        )
        await uow.wins.add(win)
        await uow.outbox.add(won_message(win, now))
        await uow.outbox.add(won_message(win, now))  # published twice: granted once
        await uow.commit()
    assert (await api.client.get("/api/content/course-1/body", headers=carol)).status_code == 402

    app = create_app(api.raffle)  # the lifespan runs the relay and consumers in-process
    async with app.router.lifespan_context(app):
        assert (await _settled(api, "carol", win.order_id)).state is WinState.COMPLETED

    page = (await api.client.get("/api/content/course-1", headers=carol)).json()
    body = await api.client.get("/api/content/course-1/body", headers=carol)
    mine = (await api.client.get("/api/me/content", headers=carol)).json()
    assert page["held"] is True
    assert body.status_code == 200, body.text
    assert body.json()["body_html"] == (
        "<h2>概率</h2>\n<p>每个奖品的概率是<strong>精确</strong>的。"
        "&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"
    )
    assert [(m["content_id"], m["order_id"], m["title"]) for m in mine] == [
        ("course-1", win.order_id, COURSE["title"])
    ]
    # Taken off sale: gone from the shelf, still the holder's to read.
    url = "/api/admin/content/course-1/state"
    assert (await api.client.post(url, headers=admin, json={"state": "off_sale"})).is_success
    assert (await api.client.get("/api/content")).json() == []
    assert (await api.client.get("/api/content/course-1/body", headers=carol)).status_code == 200
    bob = await api.login("bob")
    gone = await api.client.get("/api/content/course-1/body", headers=bob)
    assert (gone.status_code, gone.json()["code"]) == (404, "unknown_content")
