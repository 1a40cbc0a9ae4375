"""The HTTP API end to end on the embedded default."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import httpx
import pytest

from raffle.adapters.rate_limits import MemoryRateLimiter
from raffle.entrypoints.http.app import create_app
from raffle.entrypoints.http.routes import draw as draw_route
from tests.e2e.conftest import ACTIVITY, DEMO, Api
from tests.raffle_process import server_errors
from tests.unit.fakes import FakeClock

PROBLEM = "application/problem+json"


async def test_register_login_me_logout(api: Api) -> None:
    c = api.client
    made = await c.post("/api/auth/register", json={"name": "alice", "password": "s3cret-pass"})
    assert made.status_code == 201
    assert made.json() == {"id": "alice", "is_admin": False}
    again = await c.post("/api/auth/register", json={"name": "alice", "password": "s3cret-pass"})
    assert (again.status_code, again.json()["code"]) == (409, "name_taken")
    login = await c.post("/api/auth/login", json={"name": "alice", "password": "s3cret-pass"})
    token = login.json()["token"]
    assert len(token) >= 22  # ≥ 128 bits, URL-safe base64
    auth = {"Authorization": f"Bearer {token}"}
    assert (await c.get("/api/auth/me", headers=auth)).json()["id"] == "alice"
    assert (await c.post("/api/auth/logout", headers=auth)).status_code == 204
    gone = await c.get("/api/auth/me", headers=auth)
    assert (gone.status_code, gone.json()["code"]) == (401, "not_authenticated")


async def test_a_wrong_password_is_a_problem_with_a_stable_code(api: Api) -> None:
    await api.login("bob")
    answer = await api.client.post("/api/auth/login", json={"name": "bob", "password": "nope-nope"})
    assert answer.status_code == 401
    assert answer.headers["content-type"] == PROBLEM
    assert answer.json()["code"] == "invalid_credentials"
    unknown = await api.client.post(
        "/api/auth/login", json={"name": "nobody", "password": "nope-nope"}
    )
    assert unknown.json()["detail"] == answer.json()["detail"]


async def test_the_published_odds_are_public(api: Api) -> None:
    answer = await api.client.get(f"/api/activities/{ACTIVITY}")
    assert answer.status_code == 200
    body = answer.json()
    assert body["activity"]["state"] == "running"
    rates = {p["award_id"]: p["rate"] for p in body["prizes"]}
    assert rates[109] == "0.0001"
    assert {p["award_id"]: p["lock_after"] for p in body["prizes"]}[109] == 3
    assert body["weight_tiers"][0] == {"threshold": 60, "award_ids": [102, 103, 104, 105]}


async def test_a_player_draws_until_the_days_chances_are_gone(api: Api) -> None:
    auth = await api.login("carol")
    c = api.client
    account = (await c.get(f"/api/activities/{ACTIVITY}/account", headers=auth)).json()
    assert (account["total"], account["chances"], account["draws"]) == (10, 3, 0)
    drawn = []
    for n in range(1, 4):
        answer = await c.post(f"/api/activities/{ACTIVITY}/draws", headers=auth)
        assert answer.status_code == 201, answer.text
        assert answer.json()["draw_count"] == n
        drawn.append(answer.json()["order_id"])
    refused = await c.post(f"/api/activities/{ACTIVITY}/draws", headers=auth)
    assert (refused.status_code, refused.json()["code"]) == (409, "no_chances")
    account = (await c.get(f"/api/activities/{ACTIVITY}/account", headers=auth)).json()
    assert (account["total_left"], account["day_left"], account["draws"]) == (7, 0, 3)
    history = (await c.get(f"/api/activities/{ACTIVITY}/draws?limit=2", headers=auth)).json()
    assert [d["order_id"] for d in history["draws"]] == drawn[::-1][:2]
    rest = (
        await c.get(
            f"/api/activities/{ACTIVITY}/draws?limit=2&before={history['next']}", headers=auth
        )
    ).json()
    assert [d["order_id"] for d in rest["draws"]] == [drawn[0]]
    assert rest["next"] is None


async def test_my_prizes_show_how_many_draws_unlock_each(api: Api) -> None:
    auth = await api.login("dave")
    body = (await api.client.get(f"/api/activities/{ACTIVITY}/prizes", headers=auth)).json()
    unlock = {p["award_id"]: p["draws_to_unlock"] for p in body["prizes"]}
    assert (unlock[107], unlock[108], unlock[109]) == (0, 1, 2)
    assert body["weight_tiers"][0]["draws_to_reach"] == 59
    await api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=auth)
    body = (await api.client.get(f"/api/activities/{ACTIVITY}/prizes", headers=auth)).json()
    assert {p["award_id"]: p["draws_to_unlock"] for p in body["prizes"]}[109] == 1


async def test_one_key_sent_ten_times_at_once_draws_once(api: Api) -> None:
    auth = await api.login("erin")
    headers = {**auth, "Idempotency-Key": "draw-1"}
    answers = await asyncio.gather(
        *(api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=headers) for _ in range(10))
    )
    ok = [a for a in answers if a.status_code == 201]
    assert ok, [a.text for a in answers]
    assert {a.json()["order_id"] for a in ok} == {ok[0].json()["order_id"]}
    assert {a.status_code for a in answers} <= {201, 409}
    assert all(
        a.json()["code"] == "idempotency_key_in_flight" for a in answers if a.status_code == 409
    )
    account = (await api.client.get(f"/api/activities/{ACTIVITY}/account", headers=auth)).json()
    assert account["draws"] == 1
    later = await api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=headers)
    assert later.status_code == 201
    assert later.json() == ok[0].json()
    assert later.headers["Idempotent-Replayed"] == "true"


async def test_a_key_reused_for_another_request_is_refused(api: Api) -> None:
    admin = {**await api.login("root", admin=True), "Idempotency-Key": "grant-1"}
    await api.login("frank")
    body = {"user_id": "frank", "sku": 9011, "out_business_no": "order-1"}
    first = await api.client.post("/api/admin/top-ups", headers=admin, json=body)
    again = await api.client.post("/api/admin/top-ups", headers=admin, json=body)
    assert first.status_code == again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    other = await api.client.post("/api/admin/top-ups", headers=admin, json={**body, "sku": 1})
    assert (other.status_code, other.json()["code"]) == (422, "idempotency_key_reused")


async def test_no_user_reads_or_acts_for_another(api: Api) -> None:
    alice, bob = await api.login("alice"), await api.login("bob")
    c = api.client
    await c.post(f"/api/activities/{ACTIVITY}/draws", headers=alice)
    # A user id in the query or body is never trusted: the session decides.
    sneaky = await c.post(
        f"/api/activities/{ACTIVITY}/draws?user_id=alice", headers=bob, json={"user_id": "alice"}
    )
    assert sneaky.status_code == 201
    mine = (await c.get(f"/api/activities/{ACTIVITY}/draws?user_id=alice", headers=bob)).json()
    assert len(mine["draws"]) == 1
    alices = (await c.get(f"/api/activities/{ACTIVITY}/account", headers=alice)).json()
    assert alices["draws"] == 1
    for path in (
        "/api/admin/top-ups",
        "/api/admin/campaigns",
        f"/api/admin/activities/{ACTIVITY}/close",
    ):
        refused = await c.post(
            path, headers=bob, json={"user_id": "bob", "sku": 9011, "out_business_no": "x"}
        )
        assert (refused.status_code, refused.json()["code"]) == (403, "forbidden"), path


async def test_bad_input_gets_a_clear_error_and_changes_nothing(api: Api) -> None:
    auth = await api.login("gina")
    c = api.client
    unknown = await c.post("/api/activities/424242/draws", headers=auth)
    assert (unknown.status_code, unknown.json()["code"]) == (404, "unknown_activity")
    malformed = await c.post(
        "/api/auth/login", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert (malformed.status_code, malformed.json()["code"]) == (422, "invalid_input")
    undecodable = await c.post(
        "/api/auth/login", content=b"\xff\xfe{", headers={"content-type": "application/json"}
    )
    assert (undecodable.status_code, undecodable.json()["code"]) == (400, "malformed_request")
    assert undecodable.headers["content-type"] == PROBLEM
    no_token = await c.post(f"/api/activities/{ACTIVITY}/draws")
    assert (no_token.status_code, no_token.json()["code"]) == (401, "not_authenticated")
    expired = await c.post(
        f"/api/activities/{ACTIVITY}/draws", headers={"Authorization": "Bearer expired"}
    )
    assert (expired.status_code, expired.json()["code"]) == (401, "not_authenticated")
    admin = await api.login("root", admin=True)
    closed = await c.post(f"/api/admin/activities/{ACTIVITY}/close", headers=admin)
    assert closed.json()["state"] == "closed"
    refused = await c.post(f"/api/activities/{ACTIVITY}/draws", headers=auth)
    assert (refused.status_code, refused.json()["code"]) == (409, "activity_not_open")
    account = (await c.get(f"/api/activities/{ACTIVITY}/account", headers=auth)).json()
    assert account["draws"] == 0
    history = (await c.get(f"/api/activities/{ACTIVITY}/draws", headers=auth)).json()
    assert history["draws"] == []


async def test_operators_import_campaigns_and_run_the_workflow(api: Api) -> None:
    admin = await api.login("root", admin=True)
    c = api.client
    yaml = {**admin, "content-type": "application/yaml"}
    bad = await c.post(
        "/api/admin/campaigns", headers=yaml, content="awards:\n  - {id: 1, kind: x}\n"
    )
    assert (bad.status_code, bad.json()["code"]) == (422, "invalid_campaign_file")
    assert bad.json()["errors"][0]["line"] == 2
    illegal = await c.post(f"/api/admin/activities/{ACTIVITY}/approve", headers=admin)
    assert illegal.status_code == 409
    assert (illegal.json()["code"], illegal.json()["current_state"]) == (
        "illegal_transition",
        "running",
    )
    text = DEMO.read_text(encoding="utf-8")
    changed = text.replace("rate: 0.30", "rate: 0.29")
    frozen = await c.post("/api/admin/campaigns", headers=yaml, content=changed)
    assert (frozen.status_code, frozen.json()["code"]) == (409, "odds_frozen")
    same = await c.post(
        "/api/admin/campaigns", headers={**admin, "content-type": "application/yaml"}, content=text
    )
    assert same.status_code == 200, same.text


async def test_operators_top_up_once_per_business_number(api: Api) -> None:
    admin = await api.login("root", admin=True)
    await api.login("henry")
    body = {"user_id": "henry", "sku": 9011, "out_business_no": "order-77"}
    first = await api.client.post("/api/admin/top-ups", headers=admin, json=body)
    again = await api.client.post("/api/admin/top-ups", headers=admin, json=body)
    assert first.json()["credited"] is True
    assert again.json()["credited"] is False
    assert again.json()["account"]["total"] == 10 + 5  # the welcome pack first, kept for henry


async def test_the_openapi_document_lists_every_route(api: Api) -> None:
    doc = (await api.client.get("/openapi.json")).json()
    assert {
        "/api/auth/login",
        "/api/activities/{activity_id}/draws",
        "/api/admin/top-ups",
    } <= set(doc["paths"])
    draws = doc["paths"]["/api/activities/{activity_id}/draws"]
    assert set(draws) == {"get", "post"}  # the history, and the draw (its own route)
    draw = draws["post"]
    assert draw["tags"] == ["player"]
    assert draw["description"].startswith("Draw: one chance for one prize.")
    assert draw["security"] == [{"HTTPBearer": []}]
    assert doc["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    parameters = {(p["name"], p["in"], p["required"]) for p in draw["parameters"]}
    assert parameters == {("activity_id", "path", True), ("idempotency-key", "header", False)}
    answer = draw["responses"]["201"]["content"]["application/json"]["schema"]
    assert answer == {"$ref": "#/components/schemas/DrawOut"}
    ticket = draw["responses"]["202"]["content"]["application/json"]["schema"]
    assert ticket == {"$ref": "#/components/schemas/TicketOut"}  # a queued activity's
    problems = {
        status: response["content"][PROBLEM]["schema"]
        for status, response in draw["responses"].items()
        if status not in ("201", "202")
    }
    problem = {"$ref": "#/components/schemas/Problem"}
    assert problems == dict.fromkeys(("401", "403", "404", "409", "422", "429", "503"), problem)
    # the draw's answer, on its own, is the model FastAPI documents for other routes
    alone: dict[str, Any] = {"paths": {}}
    draw_route.document(alone)
    mine, fastapis = (
        alone["components"]["schemas"]["DrawOut"],
        doc["components"]["schemas"]["DrawOut"],
    )
    assert (mine["required"], set(mine["properties"])) == (
        fastapis["required"],
        set(fastapis["properties"]),
    )


async def test_a_refused_draw_is_a_problem_and_a_retried_one_replays_the_first(
    api: Api,
) -> None:
    alice = await api.login("olga")
    draws = f"/api/activities/{ACTIVITY}/draws"
    first = await api.client.post(draws, headers={**alice, "Idempotency-Key": "same"})
    again = await api.client.post(draws, headers={**alice, "Idempotency-Key": "same"})
    assert (first.status_code, again.status_code) == (201, 201)
    assert first.headers["content-type"] == "application/json"
    assert again.content == first.content
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    for path, headers, status, code in [
        (draws, {**alice, "Idempotency-Key": "x" * 129}, 422, "invalid_idempotency_key"),
        (draws, {"Authorization": "Basic b2xnYTpwdw=="}, 401, "not_authenticated"),
        (draws, {"Authorization": "bearer not-a-session"}, 401, "not_authenticated"),
        (draws, {}, 401, "not_authenticated"),
        ("/api/activities/424242/draws", alice, 404, "unknown_activity"),
        ("/api/activities/-1/draws", alice, 422, "invalid_input"),
        (f"/api/activities/{2**63}/draws", alice, 422, "invalid_input"),
        ("/api/activities/x/draws", alice, 422, "invalid_input"),
    ]:
        refused = await api.client.post(path, headers=headers)
        assert refused.headers["content-type"] == PROBLEM, (path, headers)
        assert (refused.status_code, refused.json()["code"]) == (status, code), (path, headers)
    not_a_number = await api.client.post("/api/activities/x/draws", headers=alice)
    assert not_a_number.json()["errors"] == [
        {
            "at": "path.activity_id",
            "message": "Input should be a valid integer, unable to parse string as an integer",
        }
    ]
    refused = await api.client.put(draws, headers=alice)
    assert (refused.status_code, refused.json()["code"]) == (405, "method_not_allowed")
    history = (await api.client.get(draws, headers=alice)).json()["draws"]
    assert [d["order_id"] for d in history] == [first.json()["order_id"]]


@pytest.mark.server_errors
async def test_an_unexpected_error_in_a_draw_answers_500_and_is_raised_to_the_server(
    api: Api, monkeypatch: pytest.MonkeyPatch, server_log: io.StringIO
) -> None:
    # A plain 500 for the client, and the error raised on for the server to log.
    alice = await api.login("pia")

    async def broken(key: str, limit: int, window_seconds: int) -> int:
        raise RuntimeError("the limiter broke")

    monkeypatch.setattr(api.raffle.limiter, "hit", broken)
    with pytest.raises(RuntimeError, match="the limiter broke"):
        await api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=alice)
    app = create_app(api.raffle, scheduler=False)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://raffle.test") as c:
        answer = await c.post(f"/api/activities/{ACTIVITY}/draws", headers=alice)
    assert (answer.status_code, answer.text) == (500, "Internal Server Error")
    logged = server_errors(server_log.getvalue())  # what the e2e check fails other tests on
    assert [(e["route"], e["status"], e["user_id"]) for e in logged] == [
        ("/api/activities/{activity_id}/draws", 500, "pia")
    ] * 2


async def test_a_player_drawing_too_fast_is_told_to_wait_and_spends_nothing(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    auth = await api.login("pete")
    root = await api.login("root", admin=True)
    limit = await api.client.put(
        "/api/admin/switches/draws_per_second", json={"value": "2"}, headers=root
    )
    assert limit.status_code == 200, limit.text
    # The limiter's clock stands still: the three draws fall in one second of it however slow
    # they are (on the real clock, draws slow enough let the window end before the third).
    monkeypatch.setattr(api.raffle, "limiter", MemoryRateLimiter(FakeClock()))
    path = f"/api/activities/{ACTIVITY}/draws"
    answers = [await api.client.post(path, headers=auth) for _ in range(3)]
    assert [a.status_code for a in answers] == [201, 201, 429]
    refused = answers[2]
    assert refused.headers["content-type"] == PROBLEM
    assert (refused.json()["code"], refused.headers["Retry-After"]) == ("rate_limited", "1")
    account = (await api.client.get(f"/api/activities/{ACTIVITY}/account", headers=auth)).json()
    assert account["draws"] == 2


async def test_the_reconciliation_report_counts_award_rows(api: Api) -> None:
    admin = await api.login("root", admin=True)
    player = await api.login("ivy")
    for _ in range(3):
        assert (
            await api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=player)
        ).status_code == 201
    report = (
        await api.client.get(f"/api/admin/activities/{ACTIVITY}/reconciliation", headers=admin)
    ).json()
    assert {p["award_id"] for p in report} == set(range(102, 110))
    assert all(p["drift"] == 0 and p["oversold"] == 0 for p in report), report
    async with api.raffle.shards.for_user("ivy") as uow:
        history = await uow.orders.history("ivy", ACTIVITY, None, 10)
    stocked_wins = sum(1 for _, w in history if 102 <= w.award_id <= 109)
    assert sum(p["wins"] for p in report) == stocked_wins
