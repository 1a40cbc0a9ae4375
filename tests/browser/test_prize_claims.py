"""A prize's claim on the player page: the deadline and what the profile misses are shown, the
code stays hidden until the claim, a claim refused is said in words, then accepted."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import PHONE, OpenTab, Server
from tests.browser.player import (
    choose_activity,
    load_campaign,
    operator_headers,
    post,
    register,
    token,
)

ACTIVITY, POOL = 100001, "five-off"
# Every draw wins the coupon (certain, stock 1), claimable for 7 days once a phone is known.
CAMPAIGN = f"""awards:
  - {{id: 101, kind: thanks, title: Thanks for playing}}
  - {{id: 102, kind: coupon, title: Five off, config: {POOL}}}
packs:
  - {{id: 11, total: 5, day: 5, month: 5}}
strategies:
  - id: 1001
    fallback: {{award: 101}}
    prizes:
      - {{award: 102, rate: 1, stock: 1,
         claim: {{validity: {{kind: days, days: 7}}, conditions: [phone]}}}}
activities:
  - {{id: {ACTIVITY}, name: Claims, strategy: 1001, state: running, welcome_pack: 11,
     begin_at: 2026-01-01T00:00:00+08:00, end_at: 2030-01-01T00:00:00+08:00}}
code_pools:
  {POOL}: [FIVE-1]
"""


def test_a_coupon_is_claimed_once_the_profile_has_a_phone(
    serve: Callable[..., Server], tab: OpenTab
) -> None:
    server = serve()
    admin = operator_headers(server)
    assert load_campaign(server, admin, CAMPAIGN).status_code == 200
    opened = tab(server.url + "/", PHONE)
    page = opened.page
    register(page, "winner")
    choose_activity(page, ACTIVITY)
    me = {"Authorization": f"Bearer {token(page)}"}
    won = post(server, f"/api/activities/{ACTIVITY}/draws", me).json()
    assert won["award_id"] == 102, won

    page.reload()
    prize = page.locator(f'[data-testid=my-prize][data-order="{won["order_id"]}"]')
    claim = prize.get_by_test_id("claim")
    expect(claim).to_have_attribute("data-claim", "open")
    expect(claim).to_contain_text("claim by")
    expect(claim).to_contain_text("add to your profile first: phone number")
    expect(prize).to_have_attribute("data-state", "completed", timeout=20_000)
    expect(prize.get_by_test_id("delivery")).not_to_contain_text("FIVE-1")

    prize.get_by_test_id("claim-prize").click()
    expect(page.locator("#notice")).to_have_text(
        "Your profile lacks what this prize asks for: see the prize in My prizes."
    )
    phone = {**admin, "Idempotency-Key": str(uuid.uuid4())}
    profile = httpx.put(
        f"{server.url}/api/admin/profiles/winner", headers=phone, json={"phone": "13800138000"}
    )
    assert profile.status_code == 200, profile.text
    page.reload()
    prize.get_by_test_id("claim-prize").click()
    expect(claim).to_have_attribute("data-claim", "claimed")
    expect(prize.get_by_test_id("delivery")).to_have_text("code FIVE-1")
    expect(prize.get_by_test_id("claim-prize")).to_have_count(0)
    statuses = [e.split("status of ")[-1][:3] for e in opened.errors]
    assert statuses == ["403"], opened.errors
