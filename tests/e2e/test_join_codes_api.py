"""Join codes over HTTP: an activity that requires one (set in its campaign file) refuses
the draws of players without one; operators generate, count, export and import codes; a
player redeems one once, bound to them; wrong and used codes have their own problems."""

from __future__ import annotations

import csv
import io

from tests.e2e.conftest import ACTIVITY, DEMO, Api

PROBLEM = "application/problem+json"
WELCOME = "    welcome_pack: 11              # granted on a user's first visit\n"


async def _require_codes(api: Api, admin: dict[str, str]) -> None:
    text = DEMO.read_text()
    assert WELCOME in text
    text = text.replace(WELCOME, WELCOME + "    join_code_required: true\n")
    loaded = await api.client.post(
        "/api/admin/campaigns", headers={**admin, "content-type": "application/yaml"}, content=text
    )
    assert loaded.status_code == 200, loaded.text


async def _export(api: Api, admin: dict[str, str], query: str = "") -> list[dict[str, str]]:
    answer = await api.client.get(
        f"/api/admin/activities/{ACTIVITY}/join-codes.csv{query}", headers=admin
    )
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(answer.text)))


async def _draw(api: Api, player: dict[str, str]) -> tuple[int, str | None]:
    answer = await api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=player)
    return answer.status_code, answer.json().get("code")


async def test_a_player_needs_a_code_redeems_one_and_then_draws(api: Api) -> None:
    root = await api.login("root", admin=True)
    alice, bob = await api.login("alice"), await api.login("bob")
    await _require_codes(api, root)
    published = (await api.client.get(f"/api/activities/{ACTIVITY}")).json()
    assert published["activity"]["join_code_required"] is True
    exported = (await api.client.get("/api/admin/campaigns", headers=root)).text
    assert "join_code_required: true" in exported

    refused = await api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=alice)
    assert (refused.status_code, refused.json()["code"]) == (403, "join_code_required")
    assert refused.headers["content-type"] == PROBLEM
    account = (await api.client.get(f"/api/activities/{ACTIVITY}/account", headers=alice)).json()
    assert account["draws"] == 0  # nothing spent

    made = await api.client.post(
        f"/api/admin/activities/{ACTIVITY}/join-codes/generate",
        headers=root,
        json={"count": 5, "source": "poster", "remark": "store front"},
    )
    assert made.json() == {"generated": 5, "entropy_bits": 60.0}
    counts = await api.client.get(f"/api/admin/activities/{ACTIVITY}/join-codes", headers=root)
    assert counts.json() == {"activity_id": ACTIVITY, "total": 5, "used": 0, "unused": 5}
    rows = await _export(api, root)
    assert [r["state"] for r in rows] == ["unused"] * 5
    code = rows[0]["code"]
    typed = "-".join(code[i : i + 4] for i in range(0, 12, 4)).lower()

    wrong = await api.client.post(
        f"/api/activities/{ACTIVITY}/join-code", headers=alice, json={"code": "ZZZZ-ZZZZ-ZZZZ"}
    )
    assert (wrong.status_code, wrong.json()["code"]) == (422, "join_code_invalid")
    held = await api.client.get(f"/api/activities/{ACTIVITY}/join-code", headers=alice)
    assert held.json()["code"] is None
    redeemed = await api.client.post(
        f"/api/activities/{ACTIVITY}/join-code", headers=alice, json={"code": typed}
    )
    assert redeemed.status_code == 200, redeemed.text
    assert redeemed.json()["redeemed"] is True
    assert redeemed.json()["code"] == typed.upper()
    held = await api.client.get(f"/api/activities/{ACTIVITY}/join-code", headers=alice)
    assert held.json()["code"] == typed.upper()

    assert await _draw(api, alice) == (201, None)
    assert await _draw(api, alice) == (201, None)  # remembered: no code needed again
    used = await api.client.post(
        f"/api/activities/{ACTIVITY}/join-code", headers=bob, json={"code": code}
    )
    assert (used.status_code, used.json()["code"]) == (409, "join_code_used")
    assert await _draw(api, bob) == (403, "join_code_required")

    counts = await api.client.get(f"/api/admin/activities/{ACTIVITY}/join-codes", headers=root)
    assert counts.json()["used"] == 1
    (bound,) = [r for r in await _export(api, root) if r["state"] == "used"]
    assert (bound["code"], bound["user_id"], bound["source"]) == (code, "alice", "poster")
    assert bound["bound_at"].endswith("Z")


async def test_imports_are_all_or_nothing_and_only_for_operators(api: Api) -> None:
    root, alice = await api.login("root", admin=True), await api.login("alice")
    path = f"/api/admin/activities/{ACTIVITY}/join-codes/import"
    bad = await api.client.post(
        path,
        headers=root,
        json={"codes": ["PARTNER-0001", "no!", "PARTNER-0002"], "source": "partner"},
    )
    assert (bad.status_code, bad.json()["code"]) == (422, "invalid_join_codes")
    assert [e["at"] for e in bad.json()["errors"]] == ["body.codes.1"]
    assert await _export(api, root) == []

    body = {"codes": ["PARTNER-0001", "PARTNER-0002"], "source": "partner", "remark": "batch 7"}
    first = await api.client.post(path, headers=root, json=body)
    again = await api.client.post(path, headers=root, json=body)
    assert first.json() == {"added": 2, "existing": 0}
    assert again.json() == {"added": 0, "existing": 2}
    assert len(await _export(api, root, "?source=partner")) == 2
    assert await _export(api, root, "?source=poster") == []

    for answer in (
        await api.client.post(path, headers=alice, json=body),
        await api.client.get(f"/api/admin/activities/{ACTIVITY}/join-codes.csv", headers=alice),
    ):
        assert (answer.status_code, answer.json()["code"]) == (403, "forbidden")
    unknown = await api.client.get("/api/admin/activities/424242/join-codes", headers=root)
    assert (unknown.status_code, unknown.json()["code"]) == (404, "unknown_activity")
    none = await api.client.post(
        f"/api/admin/activities/{ACTIVITY}/join-codes/generate",
        headers=root,
        json={"count": 0, "source": "poster"},
    )
    assert (none.status_code, none.json()["code"]) == (422, "invalid_input")
