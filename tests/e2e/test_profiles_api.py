"""Profiles over HTTP: players read theirs (phone masked) and change only the fields operators
opened; operators replace, search, read and import them; bad input is problem+json with a
stable code and changes nothing."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import ACTIVITY, Api
from tests.e2e.test_route_trees_api import _put, _second_activity, _tree

CSV = "text/csv; charset=utf-8"


async def _open(api: Api, root: dict[str, str], field: str, value: str = "on") -> None:
    answer = await api.client.put(
        f"/api/admin/switches/profile.edit.{field}", json={"value": value}, headers=root
    )
    assert answer.status_code == 200, answer.text


async def _problem(answer: Any, status: int, code: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = answer.json()
    assert body["code"] == code, body
    return body


async def test_a_player_reads_their_profile_masked_and_changes_only_what_is_open(api: Api) -> None:
    root = await api.login("root", admin=True)
    alice = await api.login("alice")
    empty = await api.client.get("/api/me/profile", headers=alice)
    assert empty.json() == {
        "user_id": "alice", "phone": None, "level": 0, "gender": None, "birth_date": None,
        "region": None, "channel": None, "sn": None, "attributes": {}, "editable": [],
    }  # fmt: skip
    put = await api.client.put(
        "/api/admin/profiles/alice",
        json={"phone": "138 0013 8000", "level": 3, "attributes": {"vip": True}},
        headers=root,
    )
    assert put.status_code == 200, put.text
    assert put.json()["phone"] == "+8613800138000"  # operators see it whole
    mine = (await api.client.get("/api/me/profile", headers=alice)).json()
    assert (mine["phone"], mine["level"], mine["attributes"]) == (
        "+86 138****8000",
        3,
        {"vip": True},
    )

    closed = await api.client.patch("/api/me/profile", json={"region": "上海"}, headers=alice)
    await _problem(closed, 403, "field_not_editable")
    await _open(api, root, "region")
    await _open(api, root, "attributes")
    changed = await api.client.patch(
        "/api/me/profile",
        json={"region": "上海", "attributes": {"city": "上海", "joined": "2024-05-01"}},
        headers=alice,
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["editable"] == ["attributes", "region"]
    assert changed.json()["attributes"] == {"vip": True, "city": "上海", "joined": "2024-05-01"}
    # The level is never a player's to change, whatever is open; nothing of the request applies.
    level = await api.client.patch(
        "/api/me/profile", json={"region": "北京", "level": 9}, headers=alice
    )
    body = await _problem(level, 403, "field_not_editable")
    assert "level" in body["detail"]
    await _open(api, root, "region", "off")
    again = await api.client.patch("/api/me/profile", json={"region": "北京"}, headers=alice)
    await _problem(again, 403, "field_not_editable")
    final = (await api.client.get("/api/admin/profiles/alice", headers=root)).json()
    assert (final["region"], final["level"], final["status"]) == ("上海", 3, "active")


async def test_bad_profile_input_is_refused_with_its_code_and_changes_nothing(api: Api) -> None:
    root = await api.login("root", admin=True)
    bob = await api.login("bob")
    await api.client.put("/api/admin/profiles/alice", json={"phone": "13800138000"}, headers=root)
    await _open(api, root, "phone")
    await _open(api, root, "birth_date")
    cases = [
        ({"phone": "12345"}, 422, "invalid_phone"),
        ({"phone": "+86 138 0013 8000"}, 409, "phone_taken"),
        ({"birth_date": "2990-01-01"}, 422, "invalid_profile"),
        ({"birth_date": "1990-02-30"}, 422, "invalid_input"),  # not a date at all
        ({"nickname": "b"}, 422, "invalid_input"),  # no such field
        ({"phone": "1" * 40}, 422, "invalid_input"),  # beyond its bound
    ]
    for body, status, code in cases:
        answer = await api.client.patch("/api/me/profile", json=body, headers=bob)
        await _problem(answer, status, code)
    mine = (await api.client.get("/api/me/profile", headers=bob)).json()
    assert (mine["phone"], mine["birth_date"]) == (None, None)
    not_json = await api.client.patch(
        "/api/me/profile", content=b"{", headers={**bob, "content-type": "application/json"}
    )
    assert not_json.status_code in (400, 422)
    assert (await api.client.get("/api/admin/profiles/alice", headers=bob)).status_code == 403
    missing = await api.client.get("/api/admin/profiles/nobody", headers=root)
    await _problem(missing, 404, "unknown_user")
    bad_id = await api.client.put("/api/admin/profiles/x", json={}, headers=root)
    await _problem(bad_id, 422, "invalid_profile")


async def test_operators_search_profiles_in_pages(api: Api) -> None:
    root = await api.login("root", admin=True)
    for n in range(5):
        body = {"level": n % 2, "region": "浙江", "phone": f"1380013800{n}"}
        answer = await api.client.put(f"/api/admin/profiles/user{n}", json=body, headers=root)
        assert answer.status_code == 200, answer.text
    page = (await api.client.get("/api/admin/profiles?user=user&limit=2", headers=root)).json()
    assert [p["user_id"] for p in page["items"]] == ["user0", "user1"]
    assert page["next"] == "user1"
    rest = await api.client.get(
        "/api/admin/profiles", params={"user": "user", "after": page["next"]}, headers=root
    )
    assert [p["user_id"] for p in rest.json()["items"]] == ["user2", "user3", "user4"]
    assert rest.json()["next"] is None
    by_phone = await api.client.get(
        "/api/admin/profiles", params={"phone": "138 0013 8003"}, headers=root
    )
    assert [p["user_id"] for p in by_phone.json()["items"]] == ["user3"]
    level = await api.client.get("/api/admin/profiles?level=1&region=浙江", headers=root)
    assert [p["user_id"] for p in level.json()["items"]] == ["user1", "user3"]
    await _problem(
        await api.client.get("/api/admin/profiles?level=1000", headers=root), 422, "invalid_input"
    )
    await _problem(
        await api.client.get("/api/admin/profiles?phone=abc", headers=root), 422, "invalid_phone"
    )


async def test_an_import_over_http_reports_bad_rows_and_is_idempotent(api: Api) -> None:
    root = await api.login("root", admin=True)
    text = "user_id,phone,level,attr.vip\n" + "".join(
        f"p{n:04d},1390000{n:04d},{n % 5},{'true' if n % 2 else 'false'}\n" for n in range(1000)
    )
    text += "bad row,1,1,1\np0001,,2,\n"
    headers = {**root, "content-type": CSV}
    first = await api.client.post("/api/admin/profiles/import", content=text, headers=headers)
    assert first.status_code == 200, first.text
    report = first.json()
    assert (report["rows"], report["created"], report["refused"]) == (1002, 1000, 2)
    assert [(p["line"], p["code"]) for p in report["problems"]] == [
        (1002, "invalid_profile"),
        (1003, "duplicate_user"),
    ]
    second = await api.client.post("/api/admin/profiles/import", content=text, headers=headers)
    assert (second.json()["created"], second.json()["unchanged"]) == (0, 1000)
    one = (await api.client.get("/api/admin/profiles/p0007", headers=root)).json()
    assert (one["phone"], one["level"], one["attributes"]) == ("+8613900000007", 2, {"vip": True})

    lines = '{"user_id": "p0007", "level": 4}\n{"user_id": "p0008", "colour": "red"}\n'
    jsonl = await api.client.post(
        "/api/admin/profiles/import",
        content=lines,
        headers={**root, "content-type": "application/x-ndjson"},
    )
    assert (jsonl.json()["updated"], jsonl.json()["problems"][0]["field"]) == (1, "colour")
    assert (await api.client.get("/api/admin/profiles/p0007", headers=root)).json()["level"] == 4


async def test_an_import_of_the_wrong_kind_or_shape_is_refused_whole(api: Api) -> None:
    root = await api.login("root", admin=True)
    url = "/api/admin/profiles/import"
    wrong_type = await api.client.post(
        url, content="user_id\nalice\n", headers={**root, "content-type": "application/json"}
    )
    await _problem(wrong_type, 415, "unsupported_media_type")
    header = await api.client.post(
        url, content="user_id,mood\nalice,ok\n", headers={**root, "content-type": CSV}
    )
    body = await _problem(header, 422, "invalid_profile_file")
    assert body["errors"][0]["line"] == 1
    player = await api.login("alice")
    refused = await api.client.post(
        url, content="user_id\nalice\n", headers={**player, "content-type": CSV}
    )
    await _problem(refused, 403, "forbidden")
    found = await api.client.get("/api/admin/profiles", headers=root)
    assert found.json()["items"] == []


async def test_what_is_exported_imports_back_changing_nothing(api: Api) -> None:
    root = await api.login("root", admin=True)
    text = (
        "user_id,phone,level,gender,birth_date,region,attr.vip,attr.zip,attr.joined\n"
        'alice,138 0013 8000,3,f,1990-05-17,"浙江, 杭州",true,012345,2024-05-01\n'
        "bob,,1,,,,,,\n"
    )
    headers = {**root, "content-type": CSV}
    loaded = await api.client.post("/api/admin/profiles/import", content=text, headers=headers)
    assert loaded.json()["created"] == 2
    await api.client.put(
        "/api/admin/profiles/carol", json={"attributes": {"note": "12", "n": 1.5}}, headers=root
    )
    for kind, media in (("csv", CSV), ("jsonl", "application/x-ndjson")):
        exported = await api.client.get(f"/api/admin/profile-export?format={kind}", headers=root)
        assert exported.status_code == 200
        assert exported.headers["content-type"].startswith(media.split(";")[0])
        again = await api.client.post(
            "/api/admin/profiles/import",
            content=exported.content,
            headers={**root, "content-type": media},
        )
        report = again.json()
        assert (report["rows"], report["unchanged"], report["problems"]) == (3, 3, []), report
    csv_lines = (await api.client.get("/api/admin/profile-export", headers=root)).text.splitlines()
    assert csv_lines[0] == (
        "user_id,phone,level,gender,birth_date,region,channel,sn,"
        "attr.joined,attr.n,attr.note,attr.vip,attr.zip"
    )
    assert csv_lines[3] == 'carol,,0,,,,,,,1.5,"""12""",,'
    refused = await api.client.get("/api/admin/profile-export?format=xml", headers=root)
    await _problem(refused, 422, "invalid_input")


async def test_a_decision_tree_routes_by_the_stored_profile_and_its_changes(api: Api) -> None:
    await _second_activity(api)
    root = await api.login("root", admin=True)
    assert (await _put(api, root, "newcomers", _tree())).status_code == 200
    ann = await api.login("ann")
    profile = {"gender": "f", "birth_date": "1990-06-15"}
    await api.client.put("/api/admin/profiles/ann", json=profile, headers=root)
    first = (await api.client.get("/api/me/route/newcomers", headers=ann)).json()
    assert (first["leaf"], first["path"][-1]["fact"]) == ("women", "f")
    changed = await api.client.put(
        "/api/admin/profiles/ann", json={**profile, "gender": "m"}, headers=root
    )
    assert changed.status_code == 200
    second = (await api.client.get("/api/me/route/newcomers", headers=ann)).json()
    assert (second["leaf"], second["activity_id"]) == ("everyone", ACTIVITY)
