"""Runtime switches over HTTP, in one process: paused draws, a switched-off rule in the
published odds, a limit, read-only maintenance, the audit, and what is refused."""

from __future__ import annotations

import io
import uuid

import httpx
import pytest

from tests.e2e.conftest import ACTIVITY, Api
from tests.raffle_process import server_errors

PROBLEM = "application/problem+json"
DRAWS = f"/api/activities/{ACTIVITY}/draws"
PAUSE = f"/api/admin/switches/activity.{ACTIVITY}.draws"


async def _set(api: Api, auth: dict[str, str], name: str, value: str) -> httpx.Response:
    headers = auth | {"Idempotency-Key": str(uuid.uuid4())}
    return await api.client.put(
        f"/api/admin/switches/{name}", json={"value": value}, headers=headers
    )


def _refused_on_purpose(log: io.StringIO) -> list[tuple[str, int]]:
    """The 5xx lines of the log: here only the 503s the switches answer on purpose."""
    return [(line["route"], line["status"]) for line in server_errors(log.getvalue())]


@pytest.mark.server_errors  # 503 draws_paused, on purpose
async def test_paused_draws_answer_503_spend_nothing_and_resume_and_both_are_audited(
    api: Api, server_log: io.StringIO
) -> None:
    root, pete = await api.login("root", admin=True), await api.login("pete")
    assert (await api.client.post(DRAWS, headers=pete)).status_code == 201
    paused = await _set(api, root, f"activity.{ACTIVITY}.draws", "off")
    assert paused.json() == {"name": f"activity.{ACTIVITY}.draws", "value": "off", "default": "on"}
    refused = await api.client.post(DRAWS, headers=pete)
    assert (refused.status_code, refused.headers["content-type"]) == (503, PROBLEM)
    assert refused.json()["code"] == "draws_paused"
    assert int(refused.headers["Retry-After"]) >= 1
    account = await api.client.get(f"/api/activities/{ACTIVITY}/account", headers=pete)
    assert account.json()["draws"] == 1
    assert (await _set(api, root, f"activity.{ACTIVITY}.draws", "on")).status_code == 200
    assert (await api.client.post(DRAWS, headers=pete)).status_code == 201
    audit = (await api.client.get("/api/admin/switches/audit", headers=root)).json()
    assert [(c["name"], c["old"], c["new"], c["actor"]) for c in audit] == [
        (f"activity.{ACTIVITY}.draws", "off", "on", "root"),
        (f"activity.{ACTIVITY}.draws", "on", "off", "root"),
    ]
    assert audit[0]["version"] > audit[1]["version"]
    assert _refused_on_purpose(server_log) == [("/api/activities/{activity_id}/draws", 503)]


async def test_a_switched_off_rule_leaves_the_published_odds_until_it_is_on_again(
    api: Api,
) -> None:
    root = await api.login("root", admin=True)
    odds = f"/api/activities/{ACTIVITY}"
    before = (await api.client.get(odds)).json()
    assert before["weight_tiers"]
    locked = {p["award_id"]: p["lock_after"] for p in before["prizes"]}
    assert locked[109] == 3
    assert (await _set(api, root, "strategy.100006.rule.weight", "off")).status_code == 200
    assert (await _set(api, root, "strategy.100006.rule.lock.109", "off")).status_code == 200
    during = (await api.client.get(odds)).json()
    assert during["weight_tiers"] == []
    assert {p["award_id"]: p["lock_after"] for p in during["prizes"]} == locked | {109: None}
    await _set(api, root, "strategy.100006.rule.weight", "on")
    await _set(api, root, "strategy.100006.rule.lock.109", "on")
    assert (await api.client.get(odds)).json() == before
    listed = (await api.client.get("/api/admin/switches", headers=root)).json()
    names = {s["name"] for s in listed}
    assert {"strategy.100006.rule.weight", "strategy.100006.rule.lock.109"} <= names
    assert not any("listed" in name for name in names)  # a promise to players: it stays


async def test_a_limit_switched_shows_its_value_and_the_setting_it_replaces(api: Api) -> None:
    root = await api.login("root", admin=True)
    assert (await _set(api, root, "draw_batch_size", "8")).json()["value"] == "8"
    listed = (await api.client.get("/api/admin/switches", headers=root)).json()
    limits = {s["name"]: (s["value"], s["default"]) for s in listed if "." not in s["name"]}
    assert limits == {
        "maintenance": ("off", "off"),
        "draws_per_second": ("1000", "1000"),  # the e2e fixture's setting
        "registrations_per_hour": ("20", "20"),
        "draw_batch_size": ("8", "64"),
    }


@pytest.mark.server_errors  # 503 maintenance, on purpose
async def test_maintenance_refuses_writes_keeps_reads_and_the_switch_back(
    api: Api, server_log: io.StringIO
) -> None:
    root, pete = await api.login("root", admin=True), await api.login("pete")
    assert (await _set(api, root, "maintenance", "on")).status_code == 200
    refused = await api.client.post(DRAWS, headers=pete)
    assert (refused.status_code, refused.json()["code"]) == (503, "maintenance")
    assert refused.headers["content-type"] == PROBLEM
    assert refused.headers["Retry-After"]
    rebate = await api.client.post(f"/api/activities/{ACTIVITY}/sign-in", headers=pete)
    assert rebate.status_code == 503
    assert (await api.client.get(f"/api/activities/{ACTIVITY}")).status_code == 200
    assert (await api.client.get("/api/admin/switches/audit", headers=root)).status_code == 200
    assert await api.login("ann", admin=True)  # logging in still works
    assert (await _set(api, root, "maintenance", "off")).json()["value"] == "off"
    assert (await api.client.post(DRAWS, headers=pete)).status_code == 201
    # refused before any route took them
    assert _refused_on_purpose(server_log) == [("unmatched", 503), ("unmatched", 503)]


async def test_bad_switches_are_refused_and_change_nothing(api: Api) -> None:
    root, pete = await api.login("root", admin=True), await api.login("pete")
    cases = [
        ("nonsense", "off", 422, "invalid_switch"),
        ("maintenance", "maybe", 422, "invalid_switch"),
        ("draw_batch_size", "0", 422, "invalid_switch"),
        ("strategy.100006.rule.listed", "off", 422, "invalid_switch"),
        ("activity.999.draws", "off", 404, "unknown_activity"),
        ("strategy.999.rule.weight", "off", 404, "unknown_strategy"),
    ]
    for name, value, status, code in cases:
        answer = await _set(api, root, name, value)
        assert (answer.status_code, answer.json()["code"]) == (status, code), name
    assert (await _set(api, pete, "maintenance", "on")).status_code == 403
    too_long = await _set(api, root, "x" * 65, "on")
    assert too_long.status_code == 422
    assert (await api.client.get("/api/admin/switches/audit", headers=root)).json() == []
