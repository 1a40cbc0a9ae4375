"""Decision trees over HTTP: an operator saves, reads and deletes a tree; a bad one is refused
with each problem's reason and changes nothing; a player is told their activity and path."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from raffle.domain.activity import Activity, ActivityState
from raffle.domain.profiles import Gender, Profile, age
from tests.e2e.conftest import ACTIVITY, Api

PROBLEM = "application/problem+json"
TREES = "/api/admin/route-trees"
OTHER = 100399  # a second running activity, for the women


class Profiles:
    """The profiles port, from a dict: its real adapter is another part of issue 13."""

    def __init__(self, *profiles: Profile) -> None:
        self.known = {p.user_id: p for p in profiles}

    async def of(self, user_id: str) -> Profile:
        return self.known.get(user_id, Profile(user_id))


class Audience:
    def __init__(self, members: dict[str, set[str]]) -> None:
        self.members = members

    async def holds(self, tag: str, profile: Profile, today: date) -> bool:
        return profile.user_id in self.members.get(tag, set())


def _tree(**changes: Any) -> dict[str, Any]:
    return {
        "description": "新客分流",
        "root": "by_age",
        "nodes": [
            {
                "id": "by_age",
                "field": "age",
                "lines": [
                    {"op": ">=", "value": 18, "to": "by_tag"},
                    {"op": "default", "to": "everyone"},
                ],
            },
            {
                "id": "by_tag",
                "tag": "vip",
                "lines": [
                    {"op": "==", "value": True, "to": "women"},
                    {"op": "default", "to": "by_gender"},
                ],
            },
            {
                "id": "by_gender",
                "field": "gender",
                "lines": [
                    {"op": "in", "value": ["f", "x"], "to": "women"},
                    {"op": "default", "to": "everyone"},
                ],
            },
        ],
        "leaves": [
            {"id": "women", "activity": OTHER},
            {"id": "everyone", "activity": ACTIVITY},
        ],
        **changes,
    }


def _known(value: Any) -> Any:
    """The document without the fields it leaves unset (null in the answer)."""
    if isinstance(value, dict):
        return {k: _known(v) for k, v in value.items() if v is not None}
    return [_known(v) for v in value] if isinstance(value, list) else value


async def _put(api: Api, auth: dict[str, str], name: str, body: dict[str, Any]) -> Any:
    headers = auth | {"Idempotency-Key": str(uuid.uuid4())}
    return await api.client.put(f"{TREES}/{name}", json=body, headers=headers)


async def _second_activity(api: Api) -> None:
    async with api.raffle.uow() as uow:
        demo = await uow.activities.get(ACTIVITY)
        assert demo is not None
        await uow.activities.save(
            Activity(
                OTHER,
                "女神节",
                demo.strategy_id,
                demo.begin_at,
                demo.end_at,
                state=ActivityState.RUNNING,
            )
        )
        await uow.commit()


async def test_an_operator_saves_reads_and_deletes_a_tree_by_versions(api: Api) -> None:
    await _second_activity(api)
    root = await api.login("root", admin=True)
    saved = await _put(api, root, "newcomers", _tree(base_version=0))
    assert saved.status_code == 200, saved.text
    body = saved.json()
    assert (body["name"], body["version"], body["saved_by"]) == ("newcomers", 1, "root")
    assert _known(body["nodes"]) == _tree()["nodes"]
    assert body["time_zone"] == "Asia/Shanghai"
    again = await _put(api, root, "newcomers", {k: v for k, v in body.items() if k in _tree()})
    assert again.json()["version"] == 2  # what is read back saves again as it is
    body = again.json()
    assert (await api.client.get(f"{TREES}/newcomers", headers=root)).json() == body
    assert [t["name"] for t in (await api.client.get(TREES, headers=root)).json()] == ["newcomers"]

    stale = await _put(api, root, "newcomers", _tree(base_version=0, description="x"))
    assert (stale.status_code, stale.json()["code"]) == (409, "route_tree_conflict")
    second = await _put(api, root, "newcomers", _tree(base_version=2, description="二"))
    assert (second.status_code, second.json()["version"]) == (200, 3)

    deleted = await api.client.delete(
        f"{TREES}/newcomers", params={"base_version": 3}, headers=root
    )
    assert (deleted.status_code, deleted.json()) == (200, {"name": "newcomers", "version": 4})
    gone = await api.client.get(f"{TREES}/newcomers", headers=root)
    assert (gone.status_code, gone.json()["code"]) == (404, "unknown_route_tree")


async def test_a_bad_tree_is_refused_with_each_problems_reason_and_changes_nothing(
    api: Api,
) -> None:
    await _second_activity(api)
    root = await api.login("root", admin=True)
    assert (await _put(api, root, "t", _tree())).status_code == 200
    bad = _tree()
    bad["nodes"][0]["lines"][0]["value"] = "18"  # a text for the age
    bad["nodes"][2]["lines"] = [{"op": "==", "value": "f", "to": "by_age"}]  # loops, no default
    bad["leaves"].append({"id": "lost", "activity": 4242})
    refused = await _put(api, root, "t", bad)
    assert (refused.status_code, refused.headers["content-type"]) == (422, PROBLEM)
    problem = refused.json()
    assert problem["code"] == "invalid_route_tree"
    assert {(e["reason"], e["at"]) for e in problem["errors"]} == {
        ("value_type", "nodes.0.lines.0.value"),
        ("missing_default", "nodes.2.lines"),
        ("unknown_activity", "leaves.2.activity"),
    }  # where lines lead is checked once every node reads well
    bad["nodes"][0]["lines"][0]["value"] = 18
    bad["nodes"][2]["lines"].append({"op": "default", "to": "women"})
    refused = (await _put(api, root, "t", bad)).json()
    assert {(e["reason"], e["at"]) for e in refused["errors"]} == {
        ("cycle", "nodes.2.lines.0.to"),
        ("unreachable", "leaves.2"),
        ("unknown_activity", "leaves.2.activity"),
    }
    kept = (await api.client.get(f"{TREES}/t", headers=root)).json()
    assert (kept["version"], _known(kept["nodes"])) == (1, _tree()["nodes"])
    player = await api.login("pete")
    forbidden = await _put(api, player, "t", _tree())
    assert (forbidden.status_code, forbidden.json()["code"]) == (403, "forbidden")
    unbounded = await _put(api, root, "t", _tree(root="x" * 65))
    assert (unbounded.status_code, unbounded.json()["code"]) == (422, "invalid_input")


async def test_a_player_is_told_their_activity_and_the_path_taken(api: Api) -> None:
    await _second_activity(api)
    root = await api.login("root", admin=True)
    assert (await _put(api, root, "newcomers", _tree())).status_code == 200
    adult = date(1990, 6, 15)
    years = age(adult, datetime.now(ZoneInfo("Asia/Shanghai")).date())  # the tree's zone
    api.raffle.profiles = Profiles(
        Profile("ann", gender=Gender.FEMALE, birth_date=adult),
        Profile("bob", gender=Gender.MALE, birth_date=adult),
    )
    api.raffle.tags = Audience({"vip": {"bob"}})  # type: ignore[assignment]
    ann, bob, kid = await api.login("ann"), await api.login("bob"), await api.login("kid")

    mine = await api.client.get("/api/me/route/newcomers", headers=ann)
    assert mine.status_code == 200, mine.text
    assert mine.json() == {
        "tree": "newcomers",
        "activity_id": OTHER,
        "leaf": "women",
        "path": [
            {"node": "by_age", "known": True, "fact": years, "line": 0, "op": ">=", "value": 18},
            {
                "node": "by_tag",
                "known": True,
                "fact": False,
                "line": 1,
                "op": "default",
                "value": None,
            },
            {
                "node": "by_gender",
                "known": True,
                "fact": "f",
                "line": 0,
                "op": "in",
                "value": ["f", "x"],
            },
        ],
    }
    vip = (await api.client.get("/api/me/route/newcomers", headers=bob)).json()
    assert (vip["activity_id"], [s["node"] for s in vip["path"]]) == (OTHER, ["by_age", "by_tag"])
    unknown = (await api.client.get("/api/me/route/newcomers", headers=kid)).json()
    assert unknown["activity_id"] == ACTIVITY
    assert unknown["path"] == [
        {"node": "by_age", "known": False, "fact": None, "line": 1, "op": "default", "value": None}
    ]
    assert (await api.client.get("/api/me/route/newcomers")).status_code == 401
    missing = await api.client.get("/api/me/route/nope", headers=ann)
    assert (missing.status_code, missing.json()["code"]) == (404, "unknown_route_tree")


async def test_a_campaign_files_trees_are_imported_and_exported_back(api: Api) -> None:
    root = await api.login("root", admin=True)
    yaml_headers = root | {"content-type": "application/yaml"}
    text = (Path(__file__).parents[2] / "examples" / "route-trees.yaml").read_text("utf-8")
    imported = await api.client.post("/api/admin/campaigns", headers=yaml_headers, content=text)
    assert imported.status_code == 200, imported.text
    [tree] = (await api.client.get(TREES, headers=root)).json()
    assert (tree["name"], tree["version"], tree["saved_by"]) == ("newcomers", 1, "campaign")
    exported = await api.client.get("/api/admin/campaigns", headers=root)
    assert "\ntrees:\n- name: newcomers\n" in exported.text
    again = await api.client.post(
        "/api/admin/campaigns", headers=yaml_headers, content=exported.text
    )
    assert again.status_code == 200, again.text
    assert (await api.client.get(f"{TREES}/newcomers", headers=root)).json() == tree
