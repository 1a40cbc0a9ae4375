"""Operators lock and unlock accounts over HTTP: the player's session ends at once (its
next request, a draw too, is 401 `session_ended`), their sign-in is refused with
`account_locked`, unlocking lets them in again, and each change keeps who, when and why."""

from __future__ import annotations

from tests.e2e.conftest import ACTIVITY, PASSWORD, Api


async def _lock(
    api: Api, name: str, action: str, headers: dict[str, str], reason: str | None = None
) -> dict[str, object]:
    body = None if reason is None else {"reason": reason}
    answer = await api.client.post(f"/api/admin/users/{name}/{action}", headers=headers, json=body)
    assert answer.status_code == 200, answer.text
    body: dict[str, object] = answer.json()
    return body


async def test_an_operator_locks_and_unlocks_a_player(api: Api) -> None:
    root = await api.login("root", admin=True)
    alice = await api.login("alice")
    assert (await api.client.get("/api/auth/me", headers=alice)).status_code == 200

    body = await _lock(api, "alice", "lock", root, "chargebacks")

    assert {k: body[k] for k in ("id", "is_admin", "status")} == {
        "id": "alice",
        "is_admin": False,
        "status": "locked",
    }
    (change,) = body["changes"]  # type: ignore[misc]
    assert (change["status"], change["reason"], change["by"]) == ("locked", "chargebacks", "root")
    gone = await api.client.get("/api/auth/me", headers=alice)
    assert (gone.status_code, gone.json()["code"]) == (401, "session_ended")
    draw = await api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=alice)
    assert (draw.status_code, draw.json()["code"]) == (401, "session_ended")
    refused = await api.client.post("/api/auth/login", json={"name": "alice", "password": PASSWORD})
    assert refused.status_code == 403
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["code"] == "account_locked"

    assert (await _lock(api, "alice", "unlock", root))["status"] == "active"
    assert (await api.client.get("/api/auth/me", headers=await api.login("alice"))).is_success
    still = await api.client.get("/api/auth/me", headers=alice)
    assert (still.status_code, still.json()["code"]) == (401, "session_ended")
    seen = (await api.client.get("/api/admin/users/alice", headers=root)).json()
    assert [(c["status"], c["reason"]) for c in seen["changes"]] == [
        ("active", ""),
        ("locked", "chargebacks"),
    ]


async def test_a_lock_leaves_what_the_player_owns(api: Api) -> None:
    root, alice = await api.login("root", admin=True), await api.login("alice")
    won = await api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=alice)
    assert won.status_code == 201

    async def owned(headers: dict[str, str]) -> list[object]:
        paths = [f"/api/activities/{ACTIVITY}/account", "/api/me/points", "/api/me/prizes"]
        return [(await api.client.get(p, headers=headers)).json() for p in paths]

    before = await owned(alice)
    await _lock(api, "alice", "lock", root, "look into it")
    await _lock(api, "alice", "unlock", root, "fine")
    assert await owned(await api.login("alice")) == before


async def test_only_operators_lock_and_not_themselves_nor_nobody(api: Api) -> None:
    root = await api.login("root", admin=True)
    alice = await api.login("alice")
    by_player = await api.client.post("/api/admin/users/root/lock", headers=alice)
    assert (by_player.status_code, by_player.json()["code"]) == (403, "forbidden")
    themselves = await api.client.post("/api/admin/users/root/lock", headers=root)
    assert (themselves.status_code, themselves.json()["code"]) == (403, "forbidden")
    nobody = await api.client.post("/api/admin/users/nobody/unlock", headers=root)
    assert (nobody.status_code, nobody.json()["code"]) == (404, "unknown_user")
    too_long = await api.client.post(f"/api/admin/users/{'x' * 33}/lock", headers=root)
    assert (too_long.status_code, too_long.json()["code"]) == (422, "invalid_input")
    long_reason = await api.client.post(
        "/api/admin/users/alice/lock", headers=root, json={"reason": "x" * 256}
    )
    assert (long_reason.status_code, long_reason.json()["code"]) == (422, "invalid_input")
    assert (await api.client.get("/api/auth/me", headers=root)).is_success
    assert (await api.client.get("/api/auth/me", headers=alice)).is_success
