"""Flash sales over HTTP on the embedded default: operators create and review a sale; a
player answers the challenge, buys through their path and polls the order; refused paths
and answers have stable codes and take nothing; the page is cached by ETag."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from raffle.domain.flash_gate import solve
from raffle.domain.flash_sales import PURCHASED
from tests.e2e.conftest import Api

SALE = 4242


def sale(stock: int = 1, starts_in: float = -1.0) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "id": SALE,
        "name": "限量保温杯",
        "price": 990,
        "currency": "cents",
        "original_price": 5900,
        "stock": stock,
        "starts_at": (now + timedelta(seconds=starts_in)).isoformat(),
        "ends_at": (now + timedelta(seconds=max(starts_in, 0), hours=1)).isoformat(),
        "time_zone": "Asia/Shanghai",
    }


@pytest.fixture
async def consuming(api: Api) -> AsyncIterator[Api]:
    """The purchases' consumer, as `raffle serve` runs it in-process."""
    task = asyncio.create_task(api.raffle.broker.consume(PURCHASED, api.raffle.flash.handle))
    yield api
    task.cancel()


async def created(api: Api, body: dict[str, Any]) -> None:
    admin = await api.login("root", admin=True)
    made = await api.client.post("/api/admin/flash-sales", headers=admin, json=body)
    assert made.status_code == 201, made.text


async def path_of(api: Api, player: dict[str, str]) -> str:
    challenge = await api.client.post(f"/api/flash-sales/{SALE}/challenge", headers=player)
    assert challenge.status_code == 200, challenge.text
    text = challenge.json()["challenge"]
    body = {"challenge": text, "answer": solve(text)}
    path = await api.client.post(f"/api/flash-sales/{SALE}/path", headers=player, json=body)
    assert path.status_code == 200, path.text
    return str(path.json()["path"])


async def test_a_player_buys_through_their_path_and_polls_the_order(consuming: Api) -> None:
    api = consuming
    await created(api, sale(stock=1))
    alice, bob = await api.login("alice"), await api.login("bob")

    bought = await api.client.post(
        f"/api/flash-sales/{SALE}/{await path_of(api, alice)}/purchase", headers=alice
    )
    assert bought.json() == {"result": 0, "status": "queued"}
    result = await api.client.get(f"/api/flash-sales/{SALE}/result", headers=alice)
    assert result.json() == {"result": f"fs{SALE}-alice-1"}

    again = await api.client.post(
        f"/api/flash-sales/{SALE}/{await path_of(api, alice)}/purchase", headers=alice
    )
    assert again.json() == {"result": 1, "status": "already_bought"}
    late = await api.client.post(
        f"/api/flash-sales/{SALE}/{await path_of(api, bob)}/purchase", headers=bob
    )
    assert late.json() == {"result": -1, "status": "sold_out"}

    admin = await api.login("root", admin=True)
    review = await api.client.get(f"/api/admin/flash-sales/{SALE}", headers=admin)
    assert (review.json()["left"], review.json()["orders"]) == (0, {"awaiting_payment": 1})
    assert [
        s["id"] for s in (await api.client.get("/api/admin/flash-sales", headers=admin)).json()
    ] == [SALE]


async def test_refused_paths_and_answers_have_codes_and_take_nothing(consuming: Api) -> None:
    api = consuming
    await created(api, sale(stock=2))
    alice, bob = await api.login("alice"), await api.login("bob")
    alices = await path_of(api, alice)

    async def refused(path: str, who: dict[str, str]) -> tuple[int, str]:
        answer = await api.client.post(f"/api/flash-sales/{SALE}/{path}/purchase", headers=who)
        return answer.status_code, answer.json()["code"]

    assert await refused(alices, bob) == (403, "bad_path")  # another user's
    assert await refused("1-" + "0" * 32, alice) == (403, "bad_path")
    assert await refused("not-a-path", alice) == (403, "bad_path")
    gate = api.raffle.flash.gate
    old = gate.path(SALE, "alice", datetime.now(UTC) - timedelta(seconds=gate.path_seconds))
    assert await refused(old, alice) == (403, "path_expired")

    challenge = (await api.client.post(f"/api/flash-sales/{SALE}/challenge", headers=alice)).json()
    answer = solve(challenge["challenge"])
    wrong = str(int(answer) + 1)
    for body, code in (
        ({"challenge": challenge["challenge"], "answer": wrong}, "wrong_answer"),
        ({"challenge": "made.up", "answer": answer}, "wrong_answer"),
    ):
        path = await api.client.post(f"/api/flash-sales/{SALE}/path", headers=alice, json=body)
        if code == "wrong_answer" and body["answer"] == wrong and path.status_code == 200:
            continue  # the next nonce happened to solve it too
        assert (path.status_code, path.json()["code"]) == (403, code)
    stolen = {"challenge": challenge["challenge"], "answer": answer}
    path = await api.client.post(f"/api/flash-sales/{SALE}/path", headers=bob, json=stolen)
    assert (path.status_code, path.json()["code"]) == (403, "wrong_answer")

    assert await api.raffle.flash.stock.left(SALE) == 2  # nothing taken
    unknown = await api.client.post("/api/flash-sales/9/challenge", headers=alice)
    assert (unknown.status_code, unknown.json()["code"]) == (404, "unknown_sale")


async def test_before_the_start_no_path_is_given(api: Api) -> None:
    await created(api, sale(starts_in=3600))
    alice = await api.login("alice")
    challenge = (await api.client.post(f"/api/flash-sales/{SALE}/challenge", headers=alice)).json()
    body = {"challenge": challenge["challenge"], "answer": solve(challenge["challenge"])}
    path = await api.client.post(f"/api/flash-sales/{SALE}/path", headers=alice, json=body)
    assert (path.status_code, path.json()["code"]) == (409, "sale_not_open")


async def test_the_page_is_cached_by_etag_and_bad_sales_are_named(api: Api) -> None:
    await created(api, sale())
    page = await api.client.get(f"/api/flash-sales/{SALE}")
    assert page.json()["name"] == "限量保温杯"
    assert "sku" not in page.json()
    cached = await api.client.get(
        f"/api/flash-sales/{SALE}", headers={"If-None-Match": page.headers["ETag"]}
    )
    assert cached.status_code == 304

    admin = await api.login("root", admin=True)
    taken = await api.client.post("/api/admin/flash-sales", headers=admin, json=sale())
    assert (taken.status_code, taken.json()["code"]) == (409, "sale_exists")
    base = sale()
    bad = {**base, "id": 7, "ends_at": base["starts_at"], "original_price": 1}
    invalid = await api.client.post("/api/admin/flash-sales", headers=admin, json=bad)
    assert invalid.status_code == 422
    assert invalid.json()["code"] == "invalid_sale"
    assert {e["at"] for e in invalid.json()["errors"]} == {"original_price", "ends_at"}
    player = await api.client.post(
        "/api/admin/flash-sales", headers=await api.login("eve"), json=sale()
    )
    assert player.status_code == 403


async def test_a_purchase_refuses_as_the_fastapi_route_did(consuming: Api) -> None:
    """The purchase is a plain Starlette route (routes/flash_purchase.py): the session, then
    the path parameters, are checked as FastAPI checked them, with the same problems."""
    api = consuming
    await created(api, sale(stock=1))
    alice = await api.login("alice")
    path = await path_of(api, alice)
    bought = await api.client.post(f"/api/flash-sales/{SALE}/{path}/purchase", headers=alice)
    assert bought.headers["content-type"] == "application/json"
    assert bought.json() == {"result": 0, "status": "queued"}
    mine = f"/api/flash-sales/{SALE}/{path}/purchase"
    for url, headers, status, code, at in [
        (mine, {}, 401, "not_authenticated", None),
        (mine, {"Authorization": "bearer not-a-session"}, 401, "not_authenticated", None),
        ("/api/flash-sales/x/p/purchase", {}, 401, "not_authenticated", None),
        (f"/api/flash-sales/9/{path}/purchase", alice, 404, "unknown_sale", None),
        (f"/api/flash-sales/-1/{path}/purchase", alice, 422, "invalid_input", "path.sale_id"),
        (f"/api/flash-sales/{2**63}/p/purchase", alice, 422, "invalid_input", "path.sale_id"),
        (f"/api/flash-sales/{SALE}/{'p' * 65}/purchase", alice, 422, "invalid_input",
         "path.purchase_path"),
    ]:  # fmt: skip
        refused = await api.client.post(url, headers=headers)
        assert refused.headers["content-type"] == "application/problem+json", url
        assert (refused.status_code, refused.json()["code"]) == (status, code), url
        if at is not None:
            assert [e["at"] for e in refused.json()["errors"]] == [at], url
    wrong_method = await api.client.get(mine, headers=alice)
    assert (wrong_method.status_code, wrong_method.json()["code"]) == (405, "method_not_allowed")
    assert await api.raffle.flash.stock.left(SALE) == 0  # the one unit alice bought
