"""Tags over HTTP: define static and dynamic tags (a condition or seed 004's clause), members,
references, and bad input refused with a stable code, changing nothing."""

from __future__ import annotations

import uuid
from datetime import date
from typing import Any

import httpx

from raffle.domain.profiles import Profile
from tests.e2e.conftest import Api

PROBLEM = "application/problem+json"
TAGS = "/api/admin/tags"


async def _put(api: Api, auth: dict[str, str], name: str, body: dict[str, Any]) -> httpx.Response:
    headers = auth | {"Idempotency-Key": str(uuid.uuid4())}
    return await api.client.put(f"{TAGS}/{name}", json=body, headers=headers)


async def _refused(answer: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert (answer.status_code, answer.headers["content-type"]) == (status, PROBLEM), answer.text
    body: dict[str, Any] = answer.json()
    assert body["code"] == code
    return body


async def test_an_operator_defines_tags_that_the_audience_then_answers_for(api: Api) -> None:
    root = await api.login("root", admin=True)
    saved = await _put(api, root, "beta", {"kind": "static", "description": "测试用户"})
    assert saved.status_code == 200, saved.text
    clause = {"field": "attrs.vip", "operator": "==", "value": True}
    assert (await _put(api, root, "vip", {"kind": "dynamic", "clause": clause})).status_code == 200
    either = {"kind": "dynamic", "condition": 'tags["beta"] or (tags["vip"] and age > 50)'}
    answer = await _put(api, root, "target", either)
    assert answer.json() == {
        "name": "target",
        "kind": "dynamic",
        "condition": either["condition"],
        "description": "",
        "references": ["beta", "vip"],
    }
    added = await api.client.post(
        f"{TAGS}/beta/members", json={"user_ids": ["ann", "bob", "ann"]}, headers=root
    )
    assert added.json() == {"tag": "beta", "changed": 2}
    removed = await api.client.post(
        f"{TAGS}/beta/members/remove", json={"user_ids": ["bob", "zed"]}, headers=root
    )
    assert removed.json() == {"tag": "beta", "changed": 1}
    listed = await api.client.get(f"{TAGS}/beta/members", headers=root)
    assert listed.json() == {"tag": "beta", "user_ids": ["ann"], "next": None}
    names = [t["name"] for t in (await api.client.get(TAGS, headers=root)).json()]
    assert names == ["beta", "target", "vip"]
    vip = (await api.client.get(f"{TAGS}/vip", headers=root)).json()
    assert vip["condition"] == 'attrs&["vip"] == true'
    born = {"field": "birth_date", "operator": "<", "value": "1966-01-01"}  # JSON: a date
    dated = await _put(api, root, "born", {"kind": "dynamic", "clause": born})
    assert dated.json()["condition"] == 'birth_date != null and birth_date < d"1966-01-01"'

    today = date(2026, 11, 24)
    old_vip = Profile("cy", birth_date=date(1950, 1, 1), attributes={"vip": True})
    young_vip = Profile("di", birth_date=date(2000, 1, 1), attributes={"vip": True})
    holds = api.raffle.tags.holds
    assert [await holds("target", p, today) for p in (Profile("ann"), old_vip, young_vip)] == [
        True,
        True,
        False,
    ]


async def test_bad_tags_are_refused_with_a_stable_code_and_change_nothing(api: Api) -> None:
    root, pete = await api.login("root", admin=True), await api.login("pete")
    await _put(api, root, "base", {"kind": "dynamic", "condition": "level > 1"})
    await _put(api, root, "upper", {"kind": "dynamic", "condition": 'tags["base"]'})
    malformed = await _put(api, root, "bad", {"kind": "dynamic", "condition": "age >\n  > 3"})
    problem = await _refused(malformed, 422, "malformed_condition")
    assert problem["errors"] == [
        {"at": "body.condition", "message": problem["detail"], "line": 2, "column": 3}
    ]
    await _refused(
        await _put(api, root, "bad", {"kind": "dynamic", "condition": 'age > "old"'}),
        422,
        "malformed_condition",
    )
    await _refused(
        await _put(api, root, "bad", {"kind": "dynamic", "condition": 'tags["nope"]'}),
        404,
        "unknown_tag",
    )
    ring = await _put(api, root, "base", {"kind": "dynamic", "condition": 'tags["upper"]'})
    await _refused(ring, 409, "tag_cycle")
    await _refused(await api.client.delete(f"{TAGS}/base", headers=root), 409, "tag_in_use")
    clause = {"field": "level", "operator": "in", "value": 3}
    await _refused(
        await _put(api, root, "bad", {"kind": "dynamic", "clause": clause}), 422, "invalid_tag"
    )
    await _refused(
        await _put(api, root, "bad", {"kind": "static", "condition": "level > 1"}),
        422,
        "invalid_tag",
    )
    await _refused(await _put(api, root, "Bad-Name", {"kind": "static"}), 422, "invalid_input")
    both = {"kind": "dynamic", "condition": "level > 1", "clause": clause}
    await _refused(await _put(api, root, "bad", both), 422, "invalid_input")
    members = await api.client.post(f"{TAGS}/base/members", json={"user_ids": ["a"]}, headers=root)
    await _refused(members, 422, "invalid_tag")  # a dynamic tag has no members
    too_many = {"user_ids": [f"u{n}" for n in range(10_001)]}
    await _refused(
        await api.client.post(f"{TAGS}/base/members", json=too_many, headers=root),
        422,
        "invalid_input",
    )
    await _refused(await api.client.get(f"{TAGS}/ghost", headers=root), 404, "unknown_tag")
    await _refused(await _put(api, pete, "mine", {"kind": "static"}), 403, "forbidden")
    listed = (await api.client.get(TAGS, headers=root)).json()
    assert [(t["name"], t["condition"]) for t in listed] == [
        ("base", "level > 1"),
        ("upper", 'tags["base"]'),
    ]


async def test_a_preview_counts_the_users_a_tag_holds_and_shows_the_first(api: Api) -> None:
    root = await api.login("root", admin=True)
    for name in ("ann", "bob", "cyd", "dia"):
        await api.login(name)
    await _put(api, root, "beta", {"kind": "static"})
    await api.client.post(f"{TAGS}/beta/members", json={"user_ids": ["dia", "bob"]}, headers=root)
    await _put(api, root, "not_beta", {"kind": "dynamic", "condition": 'not tags["beta"]'})
    shown = await api.client.get(f"{TAGS}/beta/preview", params={"sample": 1}, headers=root)
    assert shown.json() == {
        "tag": "beta",
        "matched": 2,
        "scanned": 5,
        "complete": True,
        "sample": ["bob"],
    }
    rest = await api.client.get(f"{TAGS}/not_beta/preview", params={"scan": 3}, headers=root)
    assert rest.json() == {
        "tag": "not_beta",
        "matched": 2,
        "scanned": 3,
        "complete": False,
        "sample": ["ann", "cyd"],
    }
    await _refused(await api.client.get(f"{TAGS}/ghost/preview", headers=root), 404, "unknown_tag")
    too_many = await api.client.get(f"{TAGS}/beta/preview?scan=0", headers=root)
    await _refused(too_many, 422, "invalid_input")


CAMPAIGN = """\
awards:
  - {id: 901, kind: thanks, title: Thanks}
tags:
  - name: beta
    kind: static
    members: [ann, bob]
  - name: target
    kind: dynamic
    condition: tags["beta"] or level >= 5
"""


async def test_a_campaign_files_tags_load_export_back_and_a_bad_file_changes_nothing(
    api: Api,
) -> None:
    root = await api.login("root", admin=True)
    headers = root | {"Content-Type": "application/yaml"}
    await _put(api, root, "stored", {"kind": "dynamic", "condition": "level > 9"})
    await _put(api, root, "outer", {"kind": "dynamic", "condition": 'tags["stored"]'})
    # a ring through the stored tags: the file's `stored` would refer to `outer`, which refers
    # to `stored`
    ring = CAMPAIGN + '  - name: stored\n    kind: dynamic\n    condition: tags["outer"]\n'
    refused = await api.client.post("/api/admin/campaigns", content=ring, headers=headers)
    problem = await _refused(refused, 422, "invalid_campaign")
    assert problem["errors"] == [
        {"at": "tags.2.condition", "message": "tags refer to each other in a ring: "
         "stored -> outer -> stored"}
    ]  # fmt: skip
    unknown = CAMPAIGN.replace("level >= 5", 'tags["ghost"]')
    refused = await api.client.post("/api/admin/campaigns", content=unknown, headers=headers)
    await _refused(refused, 422, "invalid_campaign")
    listed = [t["name"] for t in (await api.client.get(TAGS, headers=root)).json()]
    assert listed == ["outer", "stored"]
    exported = (await api.client.get("/api/admin/campaigns", headers=root)).text
    assert "ghost" not in exported
    assert "id: 901" not in exported  # refused whole

    loaded = await api.client.post("/api/admin/campaigns", content=CAMPAIGN, headers=headers)
    assert loaded.status_code == 200, loaded.text
    assert loaded.json()["tags"] == 2
    listed = (await api.client.get(f"{TAGS}/beta/members", headers=root)).json()
    assert listed["user_ids"] == ["ann", "bob"]
    exported = (await api.client.get("/api/admin/campaigns", headers=root)).text
    again = await api.client.post("/api/admin/campaigns", content=exported, headers=headers)
    assert again.status_code == 200, again.text
    assert (await api.client.get("/api/admin/campaigns", headers=root)).text == exported
    assert 'condition: tags["beta"] or level >= 5' in exported
