"""Operators lock and unlock accounts over HTTP: the player's session ends at once, their
sign-in is refused with `account_locked`, and unlocking lets them in again."""

from __future__ import annotations

from tests.e2e.conftest import PASSWORD, Api


async def _lock(api: Api, name: str, action: str, headers: dict[str, str]) -> dict[str, object]:
    answer = await api.client.post(f"/api/admin/users/{name}/{action}", headers=headers)
    assert answer.status_code == 200, answer.text
    body: dict[str, object] = answer.json()
    return body


async def test_an_operator_locks_and_unlocks_a_player(api: Api) -> None:
    root = await api.login("root", admin=True)
    alice = await api.login("alice")
    assert (await api.client.get("/api/auth/me", headers=alice)).status_code == 200

    body = await _lock(api, "alice", "lock", root)

    assert body == {"id": "alice", "is_admin": False, "status": "locked"}
    gone = await api.client.get("/api/auth/me", headers=alice)
    assert gone.status_code == 401
    refused = await api.client.post("/api/auth/login", json={"name": "alice", "password": PASSWORD})
    assert refused.status_code == 403
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["code"] == "account_locked"

    assert (await _lock(api, "alice", "unlock", root))["status"] == "active"
    assert (await api.client.get("/api/auth/me", headers=await api.login("alice"))).is_success


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
    assert (await api.client.get("/api/auth/me", headers=root)).is_success
    assert (await api.client.get("/api/auth/me", headers=alice)).is_success
