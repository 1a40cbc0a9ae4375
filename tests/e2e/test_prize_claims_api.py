"""Claim terms over HTTP: written in a campaign file, published with the odds, exported back;
my prizes show each claim's state; a claim is refused with a stable code."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from raffle.domain.draws import OrderState, RaffleOrder, Win
from raffle.service import ids
from raffle.service.effects import deliver_coupon
from tests.e2e.conftest import Api

ACTIVITY, STRATEGY, COUPON, LAMP, THANKS = 7001, 7002, 7003, 7004, 7005
CAMPAIGN = f"""
awards:
  - {{id: {THANKS}, kind: thanks, title: thanks}}
  - {{id: {COUPON}, kind: coupon, title: 30 off, config: phone-30}}
  - {{id: {LAMP}, kind: physical, title: lamp}}
strategies:
  - id: {STRATEGY}
    fallback: {THANKS}
    prizes:
      - {{award: {COUPON}, rate: 0.1, stock: 10, claim: {{validity: {{kind: days, days: 7}}}}}}
      - award: {LAMP}
        rate: 0.1
        stock: 10
        claim:
          validity: {{kind: activity}}
          conditions: [phone, attrs.member]
activities:
  - id: {ACTIVITY}
    name: claims
    strategy: {STRATEGY}
    begin_at: 2026-01-01T00:00:00+08:00
    end_at: 2036-01-01T00:00:00+08:00
    time_zone: Asia/Shanghai
    state: running
code_pools:
  phone-30: [{", ".join(f"P30-X{n:03d}" for n in range(10))}]
"""
ADDRESS = {"name": "张三", "phone": "138 0013 8000", "region": "上海", "line": "世纪大道 1 号"}


def key() -> dict[str, str]:
    return {"Idempotency-Key": str(uuid.uuid4())}


async def won(api: Api, user: str, award_id: int, at: datetime) -> str:
    order_id = ids.order_id(at)
    async with api.raffle.shards.for_user(user) as uow:
        await uow.orders.add(
            RaffleOrder(order_id, user, ACTIVITY, STRATEGY, 1, OrderState.USED, at)
        )
        await uow.wins.add(Win(order_id, user, ACTIVITY, STRATEGY, award_id, None, "default", at))
        await uow.commit()
    if award_id == COUPON:
        award = (await api.raffle.catalogue.awards())[COUPON]
        async with api.raffle.shards.for_user(user) as uow:
            await deliver_coupon(uow, order_id=order_id, user_id=user, award=award, now=at)
            await uow.commit()
    return order_id


async def test_terms_are_published_and_a_claim_is_refused_or_shows_the_code(api: Api) -> None:
    admin = await api.login("root", admin=True)
    headers = admin | key() | {"Content-Type": "application/yaml"}
    loaded = await api.client.post("/api/admin/campaigns", content=CAMPAIGN, headers=headers)
    assert loaded.status_code == 200, loaded.text
    odds = (await api.client.get(f"/api/activities/{ACTIVITY}")).json()
    published = {p["award_id"]: p["claim"] for p in odds["prizes"]}
    assert published[COUPON]["validity"] == {
        "kind": "days", "first": None, "last": None, "days": 7, "later": 0,
    }  # fmt: skip
    assert published[LAMP]["conditions"] == ["phone", "attrs.member"]
    exported = (await api.client.get("/api/admin/campaigns", headers=admin)).text
    assert "claim: {validity: {kind: days, days: 7}}" in exported

    alice = await api.login("alice")
    now = datetime.now(UTC)
    old = await won(api, "alice", COUPON, now - timedelta(days=8))
    fresh = await won(api, "alice", COUPON, now)
    lamp = await won(api, "alice", LAMP, now)

    prizes = (await api.client.get("/api/me/prizes", headers=alice)).json()["draws"]
    claims = {d["order_id"]: d["delivery"]["claim"] for d in prizes}
    assert claims[old]["state"] == "expired"
    assert (claims[fresh]["state"], claims[lamp]["missing"]) == ("open", ["phone", "attrs.member"])
    assert all(d["delivery"]["coupon_code"] is None for d in prizes)  # none claimed yet

    refused = await api.client.post(f"/api/me/prizes/{old}/claim", headers=alice | key())
    assert (refused.status_code, refused.json()["code"]) == (409, "prize_expired")
    assert refused.headers["content-type"] == "application/problem+json"
    unmet = await api.client.put(
        f"/api/me/prizes/{lamp}/address", headers=alice | key(), json=ADDRESS
    )
    assert (unmet.status_code, unmet.json()["code"]) == (403, "claim_condition_unmet")
    assert unmet.json()["missing"] == ["phone", "attrs.member"]
    claimed = await api.client.post(f"/api/me/prizes/{fresh}/claim", headers=alice | key())
    assert claimed.status_code == 200, claimed.text
    code = claimed.json()["coupon_code"]
    assert code.startswith("P30-")

    after = (await api.client.get("/api/me/prizes", headers=alice)).json()["draws"]
    shown = {d["order_id"]: d["delivery"] for d in after}
    assert (shown[fresh]["claim"]["state"], shown[fresh]["coupon_code"]) == ("claimed", code)
    assert shown[old]["coupon_code"] is None
    bob = await api.login("bob")
    stolen = await api.client.post(f"/api/me/prizes/{fresh}/claim", headers=bob | key())
    assert (stolen.status_code, stolen.json()["code"]) == (404, "prize_not_found")
