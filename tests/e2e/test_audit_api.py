"""The audit chains' heads over HTTP: operators only; a lock moves the configuration's head
on, and each chain's head is what `raffle audit verify` walks to."""

from __future__ import annotations

from tests.e2e.conftest import Api


async def test_the_heads_move_on_with_an_operator_action_and_only_operators_see_them(
    api: Api,
) -> None:
    root = await api.login("root", admin=True)
    alice = await api.login("alice")
    refused = await api.client.get("/api/admin/audit/heads", headers=alice)
    assert (refused.status_code, refused.json()["code"]) == (403, "forbidden")

    before = (await api.client.get("/api/admin/audit/heads", headers=root)).json()
    locked = await api.client.post(
        "/api/admin/users/alice/lock", headers=root, json={"reason": "chargebacks"}
    )
    assert locked.status_code == 200, locked.text
    after = (await api.client.get("/api/admin/audit/heads", headers=root)).json()

    assert [h["chain"] for h in after] == [h["chain"] for h in before]
    assert after[0]["chain"] == "config"
    assert after[0]["seq"] == before[0]["seq"] + 1
    assert after[0]["hash"] != before[0]["hash"]
    assert len(after[0]["hash"]) == 64
    assert after[1:] == before[1:]  # a lock is the configuration's: the shards' are unmoved
