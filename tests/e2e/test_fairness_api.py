"""Verifiable draws over HTTP: a draw's receipt, the activity's commitments, a player's client
seed, the public verifier before and after an operator's rotation; no seed in any answer of
any route (anonymous, player, operator) nor in any log line before its reveal."""

from __future__ import annotations

import base64
import io
from datetime import UTC, datetime, timedelta

import httpx

from raffle.service.fairness import ROTATION_GRACE
from tests.e2e.conftest import ACTIVITY, Api

PROBLEM = "application/problem+json"


class Later:
    """The real time moved on by `ahead`: the reveal comes without waiting for it."""

    def __init__(self) -> None:
        self.ahead = timedelta(0)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.ahead


async def _draw(api: Api, player: dict[str, str]) -> dict[str, object]:
    answer = await api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=player)
    assert answer.status_code == 201, answer.text
    body: dict[str, object] = answer.json()
    return body


async def test_a_draw_is_verified_after_a_rotation_and_no_seed_shows_before(
    api: Api, server_log: io.StringIO
) -> None:
    clock = api.raffle.clock = Later()
    root, alice, bob = (
        await api.login("root", admin=True),
        await api.login("alice"),
        await api.login("bob"),
    )
    set_seed = await api.client.put(
        "/api/me/client-seed", headers=alice, json={"client_seed": "lucky-7"}
    )
    assert set_seed.json() == {"client_seed": "lucky-7"}
    drawn = await _draw(api, alice)
    receipt = drawn["receipt"]
    assert isinstance(receipt, dict)
    assert (receipt["order_id"], receipt["client_seed"], receipt["nonce"]) == (
        drawn["order_id"], "lucky-7", 1,
    )  # fmt: skip
    assert (receipt["award_id"], receipt["rule"]) == (drawn["award_id"], drawn["rule"])
    default = (await api.client.get("/api/me/client-seed", headers=bob)).json()["client_seed"]
    assert default
    assert default != "lucky-7"

    before = (await api.client.get(f"/api/activities/{ACTIVITY}/fairness")).json()
    assert receipt["commitment"] == before["current"]["commitment"]
    assert (before["current"]["seed"], before["next"]["seed"], before["revealed"]) == (
        None,
        None,
        [],
    )
    mine = await api.client.get(f"/api/me/draws/{drawn['order_id']}/receipt", headers=alice)
    assert mine.json() == receipt
    theirs = await api.client.get(f"/api/me/draws/{drawn['order_id']}/receipt", headers=bob)
    assert (theirs.status_code, theirs.json()["code"]) == (404, "no_receipt")
    early = await api.client.post("/api/receipts/verify", json=receipt)
    assert early.json() == {"revealed": False, "matches": False, "differs": []}
    async with api.raffle.uow() as uow:
        seed = await uow.seeds.get(ACTIVITY, receipt["period"])  # type: ignore[arg-type]
    assert seed is not None
    secret = seed.secret.hex()
    assert secret not in repr(seed)
    assert secret not in server_log.getvalue()
    for text in (str(drawn), str(before), mine.text, early.text):
        assert secret not in text

    rotated = await api.client.post(
        f"/api/admin/activities/{ACTIVITY}/fairness/rotate", headers=root
    )
    assert rotated.status_code == 200, rotated.text
    assert rotated.json()["current"]["seed"] is None  # within its grace, still secret
    assert secret not in rotated.text
    clock.ahead = ROTATION_GRACE
    after = (await api.client.get(f"/api/activities/{ACTIVITY}/fairness")).json()
    assert after["current"]["commitment"] == before["next"]["commitment"]
    assert [(s["commitment"], s["seed"]) for s in after["revealed"]] == [
        (receipt["commitment"], secret)
    ]
    checked = await api.client.post("/api/receipts/verify", json=receipt)
    assert checked.json() == {"revealed": True, "matches": True, "differs": []}
    forged = {**receipt, "client_seed": "lucky-8"}
    said = (await api.client.post("/api/receipts/verify", json=forged)).json()
    assert said == {"revealed": True, "matches": False, "differs": ["client_seed"]}
    later = await _draw(api, alice)
    assert later["receipt"]["commitment"] == after["current"]["commitment"]  # type: ignore[index]


async def test_bad_client_seeds_and_receipts_are_clear_problems_and_change_nothing(
    api: Api,
) -> None:
    alice = await api.login("alice")
    for bad, code in (
        ("a|b", "bad_client_seed"),
        ("", "invalid_input"),
        ("x" * 65, "invalid_input"),
    ):
        refused = await api.client.put(
            "/api/me/client-seed", headers=alice, json={"client_seed": bad}
        )
        assert refused.status_code == 422, bad
        assert refused.headers["content-type"] == PROBLEM
        assert refused.json()["code"] == code
    assert (await api.client.get("/api/me/client-seed", headers=alice)).json()[
        "client_seed"
    ] != "a|b"
    unknown = await api.client.post("/api/receipts/verify", json={"order_id": "x"})
    assert (unknown.status_code, unknown.json()["code"]) == (422, "invalid_input")
    missing = await api.client.get("/api/me/draws/nope/receipt", headers=alice)
    assert (missing.status_code, missing.json()["code"]) == (404, "no_receipt")
    unauthenticated = await api.client.put("/api/me/client-seed", json={"client_seed": "x"})
    assert unauthenticated.status_code == 401


PARAMETERS = {
    "activity_id": str(ACTIVITY),
    "user_id": "alice",
    "name": "vip",
    "pool": "codes",
    "content_id": "1",
    "image_id": "x",
    "out_trade_no": "x",
    "tree": "x",
    "ticket": "x",
    "sale_id": "1",
    "order_id": "x",
    "strategy_id": "1",
    "award_id": "1",
    "trade_no": "x",
}


async def test_no_answer_of_any_route_nor_log_line_holds_a_seed_before_its_reveal(
    api: Api, server_log: io.StringIO
) -> None:
    clock = api.raffle.clock = Later()
    answers: list[str] = []

    async def kept(response: httpx.Response) -> None:
        await response.aread()
        answers.append(f"{response.headers}\n{response.text}")

    api.client.event_hooks["response"].append(kept)
    root, alice = await api.login("root", admin=True), await api.login("alice")
    orders = [str((await _draw(api, alice))["order_id"]) for _ in range(3)]
    spec = (await api.client.get("/openapi.json")).json()
    paths = [path for path, operations in spec["paths"].items() if "get" in operations]
    assert "/api/activities/{activity_id}/fairness" in paths

    async def every_route() -> None:
        values = {**PARAMETERS, "order_id": orders[0]}
        for path in paths:
            for headers in ({}, alice, root):
                await api.client.get(path.format(**values), headers=headers)

    await every_route()
    mine = await api.client.get(f"/api/me/draws/{orders[0]}/receipt", headers=alice)
    await api.client.post("/api/receipts/verify", json=mine.json())
    async with api.raffle.uow() as uow:
        current, following = await uow.seeds.upcoming(ACTIVITY, clock.now())
    secrets = [s.secret.hex() for s in (current, following)]
    secrets += [base64.b64encode(s.secret).decode() for s in (current, following)]
    assert len(answers) > 3 * len(paths)
    for secret in secrets:
        assert not [a for a in answers if secret in a]
        assert secret not in server_log.getvalue()

    await api.client.post(f"/api/admin/activities/{ACTIVITY}/fairness/rotate", headers=root)
    clock.ahead = ROTATION_GRACE
    answers.clear()
    await every_route()
    revealed = [a for a in answers if current.secret.hex() in a]
    assert revealed  # the grep finds a seed once it is out: the fairness page shows it
    assert all(following.secret.hex() not in a for a in answers)  # the one now in force
    assert following.secret.hex() not in server_log.getvalue()
