"""Participation policies over HTTP: an operator sets them, a player outside them is refused
with each policy's reason as problem+json and keeps the chance, a player inside draws."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from raffle.domain.tags import Tag, TagKind
from raffle.service.tags import add_members, save_tag
from tests.e2e.conftest import ACTIVITY, Api

PROBLEM = "application/problem+json"
POLICIES = f"/api/admin/activities/{ACTIVITY}/policies"
DRAWS = f"/api/activities/{ACTIVITY}/draws"


async def _put(api: Api, auth: dict[str, str], body: dict[str, Any]) -> httpx.Response:
    headers = auth | {"Idempotency-Key": str(uuid.uuid4())}
    return await api.client.put(POLICIES, json=body, headers=headers)


async def test_a_player_outside_every_policy_is_refused_with_the_reasons_and_keeps_the_chance(
    api: Api,
) -> None:
    root, pete = await api.login("root", admin=True), await api.login("pete")
    body = {
        "policies": [
            {"policy_id": 1, "priority": 1, "tag": "vip"},
            {"policy_id": 2, "priority": 2, "levels": [5], "points_cost": 0},
        ]
    }
    assert (await _put(api, root, body)).status_code == 200
    stored = (await api.client.get(POLICIES, headers=root)).json()
    assert [p["policy_id"] for p in stored["policies"]] == [1, 2]
    assert stored["person_caps"] == {"wins": None, "once_per_prize": False}

    refused = await api.client.post(DRAWS, headers=pete)

    assert (refused.status_code, refused.headers["content-type"]) == (403, PROBLEM)
    assert refused.json()["code"] == "not_admitted"
    assert refused.json()["refusals"] == [
        {"policy_id": 1, "reason": "not_in_audience"},
        {"policy_id": 2, "reason": "level_required"},
    ]
    await save_tag(Tag("vip", TagKind.STATIC), api.raffle.tags)
    await add_members("vip", ["pete"], api.raffle.tags)
    await api.raffle.tags.refresh()
    drawn = await api.client.post(DRAWS, headers=pete)
    assert drawn.status_code == 201, drawn.text
    assert drawn.json()["draw_count"] == 1  # the refused draw spent no chance


async def test_policies_are_for_operators_and_a_running_activitys_caps_are_fixed(
    api: Api,
) -> None:
    root, pete = await api.login("root", admin=True), await api.login("pete")
    assert (await api.client.get(POLICIES, headers=pete)).status_code == 403
    capped = {"person_caps": {"wins": {"count": 1, "period": "day"}}}
    frozen = await _put(api, root, capped)
    assert (frozen.status_code, frozen.json()["code"]) == (409, "odds_frozen")
    twice = {"policies": [{"policy_id": 1, "priority": 1}, {"policy_id": 1, "priority": 2}]}
    assert (await _put(api, root, twice)).status_code == 422
    unknown = await api.client.get("/api/admin/activities/424242/policies", headers=root)
    assert unknown.status_code == 404
    assert (await api.client.get(POLICIES, headers=root)).json()["policies"] == []
