"""The SKU shop of an activity over HTTP: what a player can buy with points, publicly listed."""

from __future__ import annotations

from tests.e2e.conftest import ACTIVITY, Api

SHOP = f"/api/activities/{ACTIVITY}/skus"


async def test_the_shop_lists_the_activitys_skus_with_pack_price_and_stock(api: Api) -> None:
    answer = await api.client.get(SHOP)
    assert answer.status_code == 200, answer.text
    skus = answer.json()
    assert [s["sku"] for s in skus] == [9011, 9012, 9013]
    assert skus[0] == {
        "sku": 9011, "activity_id": ACTIVITY, "total": 5, "day": 5, "month": 5,
        "price_points": 100, "stock": 100000, "stock_left": 100000,
    }  # fmt: skip


async def test_a_sign_in_rebate_takes_a_unit_the_shop_shows(api: Api) -> None:
    auth = await api.login("alice")
    signed = await api.client.post(f"/api/activities/{ACTIVITY}/sign-in", headers=auth)
    assert signed.status_code == 200, signed.text
    left = {s["sku"]: s["stock_left"] for s in (await api.client.get(SHOP)).json()}
    assert left == {9011: 99999, 9012: 100000, 9013: 100000}


async def test_the_shop_of_an_unknown_activity_is_a_404(api: Api) -> None:
    answer = await api.client.get("/api/activities/999/skus")
    assert answer.status_code == 404
    assert answer.json()["code"] == "unknown_activity"


async def test_the_published_odds_name_the_fallback_prize(api: Api) -> None:
    odds = (await api.client.get(f"/api/activities/{ACTIVITY}")).json()
    assert (odds["fallback_award_id"], odds["fallback_title"]) == (101, "随机积分")
