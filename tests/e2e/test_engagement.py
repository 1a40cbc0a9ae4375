"""Sign-in, points, exchange and operator-reported behaviours over HTTP (embedded default).

The demo activity rebates `sign_in` with SKU 9011 (5 chances) and 10 points, and `share`
with 5 points; SKU 9011 costs 100 points.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from tests.e2e.conftest import ACTIVITY, Api
from tests.unit.fakes import FakeClock

PROBLEM = "application/problem+json"
SIGN_IN = f"/api/activities/{ACTIVITY}/sign-in"
CALENDAR = f"/api/activities/{ACTIVITY}/sign-ins"
NOON = datetime(2026, 11, 21, 4, tzinfo=UTC)  # 12:00 in the activity's zone (+8)


@pytest.fixture(autouse=True)
def _at_noon(api: Api) -> None:
    """On the real clock a test across the activity's midnight (16:00 UTC) signs in on two
    days: the second sign-in of the day rebates again."""
    api.raffle.clock = FakeClock(NOON)


def _today() -> datetime:
    return NOON.astimezone(ZoneInfo("Asia/Shanghai"))


async def _share(api: Api, user: str, times: int) -> None:
    admin = await api.login("root", admin=True)
    for n in range(times):
        body = {"user_id": user, "activity_id": ACTIVITY, "behaviour": "share",
                "business_key": f"post-{n}"}  # fmt: skip
        answer = await api.client.post("/api/admin/behaviours", headers=admin, json=body)
        assert answer.status_code == 200, answer.text


async def test_signing_in_twice_a_day_rebates_once(api: Api) -> None:
    auth = await api.login("alice")
    first = await api.client.post(SIGN_IN, headers=auth)
    again = await api.client.post(SIGN_IN, headers=auth)
    assert first.status_code == again.status_code == 200
    assert (first.json()["granted"], again.json()["granted"]) == (True, False)
    assert again.json()["rebate"] == first.json()["rebate"]
    assert first.json()["rebate"]["points"] == 10
    assert first.json()["rebate"]["sku"] == 9011
    assert first.json()["day"] == _today().date().isoformat()
    assert first.json()["streak"] == 1
    points = (await api.client.get("/api/me/points", headers=auth)).json()
    assert points["balance"] == {"total": 10, "available": 10}
    assert [o["reason"] for o in points["orders"]] == ["rebate sign_in"]
    account = (await api.client.get(f"/api/activities/{ACTIVITY}/account", headers=auth)).json()
    assert account["total"] == 10 + 5  # the welcome pack (first visit) and the SKU's pack


async def test_a_sign_in_retried_with_its_key_is_replayed(api: Api) -> None:
    auth = {**await api.login("bob"), "Idempotency-Key": "sign-1"}
    first = await api.client.post(SIGN_IN, headers=auth)
    again = await api.client.post(SIGN_IN, headers=auth)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()


async def test_my_calendar_shows_today_and_the_streak(api: Api) -> None:
    auth = await api.login("carol")
    empty = (await api.client.get(CALENDAR, headers=auth)).json()
    assert (empty["days"], empty["signed_today"], empty["streak"]) == ([], False, 0)
    await api.client.post(SIGN_IN, headers=auth)
    today = _today()
    mine = (await api.client.get(f"{CALENDAR}?month={today:%Y-%m}", headers=auth)).json()
    assert mine == {
        "month": f"{today:%Y-%m}",
        "days": [today.day],
        "today": today.date().isoformat(),
        "signed_today": True,
        "streak": 1,
    }
    other = (await api.client.get(f"{CALENDAR}?month=2026-01", headers=auth)).json()
    assert other["days"] == []
    bad = await api.client.get(f"{CALENDAR}?month=2026-13", headers=auth)
    assert (bad.status_code, bad.json()["code"]) == (422, "invalid_input")
    anonymous = await api.client.get(CALENDAR)
    assert anonymous.status_code == 401


async def test_points_buy_chances_and_a_short_balance_changes_nothing(api: Api) -> None:
    auth = await api.login("dave")
    await api.client.post(SIGN_IN, headers=auth)  # 10 points
    short = await api.client.post(
        "/api/me/points/exchanges", headers={**auth, "Idempotency-Key": "x-1"}, json={"sku": 9011}
    )
    assert (short.status_code, short.headers["content-type"]) == (409, PROBLEM)
    assert short.json()["code"] == "insufficient_points"
    await _share(api, "dave", 18)  # 90 more
    headers = {**auth, "Idempotency-Key": "x-2"}
    bought = await api.client.post("/api/me/points/exchanges", headers=headers, json={"sku": 9011})
    assert bought.status_code == 200, bought.text
    body = bought.json()
    assert body["exchanged"] is True
    assert body["balance"] == {"total": 100, "available": 0}
    assert (body["order"]["kind"], body["order"]["amount"]) == ("spend", 100)
    assert body["account"]["total"] == 10 + 5 + 5  # welcome, sign-in, exchange
    page = (await api.client.get("/api/me/points?limit=5", headers=auth)).json()
    assert len(page["orders"]) == 5
    assert page["orders"][0]["kind"] == "spend"
    rest = (await api.client.get(f"/api/me/points?before={page['next']}", headers=auth)).json()
    assert len(rest["orders"]) == 20 - 5  # sign-in, 18 shares, the exchange
    assert rest["next"] is None
    unknown = await api.client.post("/api/me/points/exchanges", headers=auth, json={"sku": 1})
    assert (unknown.status_code, unknown.json()["code"]) == (404, "unknown_sku")


async def test_operators_report_behaviours_once_per_business_key(api: Api) -> None:
    player = await api.login("erin")
    admin = await api.login("root", admin=True)
    body = {"user_id": "erin", "activity_id": ACTIVITY, "behaviour": "share",
            "business_key": "order-42"}  # fmt: skip
    first = await api.client.post("/api/admin/behaviours", headers=admin, json=body)
    again = await api.client.post("/api/admin/behaviours", headers=admin, json=body)
    assert (first.json()["granted"], again.json()["granted"]) == (True, False)
    assert first.json()["rebate"]["points"] == 5
    unknown = await api.client.post(
        "/api/admin/behaviours", headers=admin, json={**body, "behaviour": "comment"}
    )
    assert (unknown.status_code, unknown.json()["code"]) == (404, "no_rebate_rule")
    built_in = await api.client.post(
        "/api/admin/behaviours", headers=admin, json={**body, "behaviour": "sign_in"}
    )
    assert (built_in.status_code, built_in.json()["code"]) == (422, "invalid_behaviour")
    forbidden = await api.client.post("/api/admin/behaviours", headers=player, json=body)
    assert (forbidden.status_code, forbidden.json()["code"]) == (403, "forbidden")
    points = (await api.client.get("/api/me/points", headers=player)).json()
    assert points["balance"]["available"] == 5


async def test_the_openapi_document_lists_the_engagement_routes(api: Api) -> None:
    doc = (await api.client.get("/openapi.json")).json()
    assert {
        "/api/activities/{activity_id}/sign-in",
        "/api/activities/{activity_id}/sign-ins",
        "/api/me/points",
        "/api/me/points/exchanges",
        "/api/admin/behaviours",
    } <= set(doc["paths"])
    exchange = doc["paths"]["/api/me/points/exchanges"]["post"]
    assert {"200", "401", "404", "409", "422"} <= set(exchange["responses"])
    assert "ExchangeOut" in str(exchange["responses"]["200"])
