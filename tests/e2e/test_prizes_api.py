"""Prizes after the draw over HTTP: my prizes with their delivery, shipping addresses,
content; operators' code pools and shipments."""

from __future__ import annotations

from datetime import UTC, datetime

from raffle.domain.awards import AwardKind
from raffle.domain.draws import OrderState, RaffleOrder, Win
from raffle.service import ids
from raffle.service.effects import deliver_content, deliver_coupon, deliver_physical
from tests.e2e.conftest import ACTIVITY, Api

STRATEGY, COUPON, CONTENT, LAMP = 100006, 107, 108, 109  # the demo campaign's
ADDRESS = {
    "name": "张三",
    "phone": "138 0013 8000",
    "region": "上海市 浦东新区",
    "line": "世纪大道 100 号",
    "postcode": "200120",
}
DELIVERERS = {
    AwardKind.COUPON: deliver_coupon,
    AwardKind.CONTENT: deliver_content,
    AwardKind.PHYSICAL: deliver_physical,
}


async def won(api: Api, user: str, award_id: int, *, delivered: bool = True) -> str:
    """A win of `award_id` as a draw records it, then delivered as the pipeline would."""
    now = datetime.now(UTC)
    order_id = ids.order_id(now)
    win = Win(order_id, user, ACTIVITY, STRATEGY, award_id, None, "default", now)
    async with api.raffle.shards.for_user(user) as uow:
        await uow.orders.add(
            RaffleOrder(order_id, user, ACTIVITY, STRATEGY, 1, OrderState.USED, now)
        )
        await uow.wins.add(win)
        await uow.commit()
    if delivered:
        award = (await api.raffle.catalogue.awards())[award_id]
        async with api.raffle.shards.for_user(user) as uow:
            await DELIVERERS[award.kind](uow, order_id=order_id, user_id=user, award=award, now=now)
            await uow.commit()
    return order_id


async def test_my_prizes_show_each_delivery(api: Api) -> None:
    auth = await api.login("alice")
    coupon = await won(api, "alice", COUPON)
    content = await won(api, "alice", CONTENT)
    lamp = await won(api, "alice", LAMP)
    await won(api, "bob", LAMP)

    body = (await api.client.get("/api/me/prizes?limit=2", headers=auth)).json()
    rest = (await api.client.get(f"/api/me/prizes?before={body['next']}", headers=auth)).json()

    prizes = {d["order_id"]: d for d in body["draws"] + rest["draws"]}
    assert list(prizes) == [lamp, content, coupon]
    assert rest["next"] is None
    assert prizes[coupon]["award_kind"] == "coupon"
    assert prizes[coupon]["delivery"]["coupon_code"].startswith("P30-")
    assert prizes[content]["delivery"]["content_id"] == "course-1"
    shipment = prizes[lamp]["delivery"]["shipment"]
    assert (shipment["state"], shipment["address"]) == ("awaiting_address", None)
    assert {d["state"] for d in prizes.values()} == {"create"}  # the pipeline completes them
    history = (await api.client.get(f"/api/activities/{ACTIVITY}/draws", headers=auth)).json()
    assert [d["order_id"] for d in history["draws"]] == list(prizes)
    assert history["draws"][-1]["delivery"] == prizes[coupon]["delivery"]
    content_list = (await api.client.get("/api/me/content", headers=auth)).json()
    assert [(g["content_id"], g["order_id"]) for g in content_list] == [("course-1", content)]


async def test_a_winner_addresses_their_prize_and_nobody_else_can(api: Api) -> None:
    alice, mallory = await api.login("alice"), await api.login("mallory")
    lamp = await won(api, "alice", LAMP)
    coupon = await won(api, "alice", COUPON)
    url = f"/api/me/prizes/{lamp}/address"

    stolen = await api.client.put(url, headers=mallory, json=ADDRESS)
    missing = await api.client.put("/api/me/prizes/nope/address", headers=alice, json=ADDRESS)
    not_shipped = await api.client.put(
        f"/api/me/prizes/{coupon}/address", headers=alice, json=ADDRESS
    )
    for answer in (stolen, missing, not_shipped):
        assert (answer.status_code, answer.json()["code"]) == (404, "prize_not_found")
    # Another's order reads exactly like a missing one: nothing tells it exists.
    assert stolen.json()["detail"] == missing.json()["detail"].replace("nope", lamp)

    headers = {**alice, "Idempotency-Key": "addr-1"}
    given = await api.client.put(url, headers=headers, json=ADDRESS)
    again = await api.client.put(url, headers=headers, json=ADDRESS)
    assert given.status_code == 200, given.text
    assert (given.json()["state"], given.json()["address"]) == ("ready", ADDRESS)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == given.json()


async def test_a_bad_address_names_each_field_and_changes_nothing(api: Api) -> None:
    auth = await api.login("alice")
    lamp = await won(api, "alice", LAMP)
    bad = {**ADDRESS, "name": " ", "phone": "call me"}

    answer = await api.client.put(f"/api/me/prizes/{lamp}/address", headers=auth, json=bad)
    incomplete = await api.client.put(
        f"/api/me/prizes/{lamp}/address", headers=auth, json={"name": "x"}
    )

    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_address")
    assert [e["at"] for e in answer.json()["errors"]] == ["name", "phone"]
    assert (incomplete.status_code, incomplete.json()["code"]) == (422, "invalid_input")
    body = (await api.client.get("/api/me/prizes", headers=auth)).json()
    assert body["draws"][0]["delivery"]["shipment"]["state"] == "awaiting_address"


async def test_operators_ship_ready_prizes(api: Api) -> None:
    admin, alice = await api.login("root", admin=True), await api.login("alice")
    lamp = await won(api, "alice", LAMP)
    waiting = await won(api, "bob", LAMP)
    await api.client.put(f"/api/me/prizes/{lamp}/address", headers=alice, json=ADDRESS)
    assert (await api.client.get("/api/admin/shipments", headers=alice)).status_code == 403

    ready = (await api.client.get("/api/admin/shipments", headers=admin)).json()
    awaiting = (
        await api.client.get("/api/admin/shipments?state=awaiting_address", headers=admin)
    ).json()
    assert [s["order_id"] for s in ready["shipments"]] == [lamp]
    assert [s["order_id"] for s in awaiting["shipments"]] == [waiting]
    not_ready = await api.client.post(
        f"/api/admin/shipments/{waiting}/shipped", headers=admin, json={"user_id": "bob"}
    )
    assert (not_ready.status_code, not_ready.json()["code"]) == (409, "illegal_shipment_state")
    assert not_ready.json()["current_state"] == "awaiting_address"
    wrong_user = await api.client.post(
        f"/api/admin/shipments/{lamp}/shipped", headers=admin, json={"user_id": "bob"}
    )
    assert wrong_user.status_code == 404

    done = await api.client.post(
        f"/api/admin/shipments/{lamp}/shipped",
        headers={**admin, "Idempotency-Key": "ship-1"},
        json={"user_id": "alice", "tracking": "SF1234567890"},
    )
    assert (done.json()["state"], done.json()["tracking"]) == ("shipped", "SF1234567890")
    late = await api.client.put(f"/api/me/prizes/{lamp}/address", headers=alice, json=ADDRESS)
    assert (late.status_code, late.json()["current_state"]) == (409, "shipped")
    assert (await api.client.get("/api/admin/shipments", headers=admin)).json()["shipments"] == []


async def test_operators_fill_code_pools(api: Api) -> None:
    admin = await api.login("root", admin=True)
    demo = (await api.client.get("/api/admin/code-pools/phone-30", headers=admin)).json()
    assert demo == {"pool": "phone-30", "total": 60, "handed": 0, "free": 60}

    url = "/api/admin/code-pools/phone-30/codes"
    added = await api.client.post(url, headers=admin, json={"codes": ["NEW-1", "NEW-2"]})
    again = await api.client.post(url, headers=admin, json={"codes": ["NEW-2", "NEW-3"]})
    bad = await api.client.post(url, headers=admin, json={"codes": ["NEW 4"]})

    assert added.json() == {"added": 2, "pool": {**demo, "total": 62, "free": 62}}
    assert again.json()["added"] == 1
    assert (bad.status_code, bad.json()["code"]) == (422, "invalid_codes")
    await won(api, "alice", COUPON)
    pools = (await api.client.get("/api/admin/code-pools", headers=admin)).json()
    assert pools == [{"pool": "phone-30", "total": 63, "handed": 1, "free": 62}]


async def test_the_openapi_document_lists_the_prize_routes(api: Api) -> None:
    doc = (await api.client.get("/openapi.json")).json()
    address = doc["paths"]["/api/me/prizes/{order_id}/address"]["put"]
    assert {"200", "401", "404", "409", "422"} <= set(address["responses"])
    assert {
        "/api/me/prizes",
        "/api/me/content",
        "/api/admin/code-pools",
        "/api/admin/code-pools/{pool}/codes",
        "/api/admin/shipments",
        "/api/admin/shipments/{order_id}/shipped",
    } <= set(doc["paths"])
