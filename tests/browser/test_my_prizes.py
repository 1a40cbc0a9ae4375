"""My prizes on the player page: more than a page of them, read with the API's cursor, and
an undelivered one followed until it is delivered, without reloading."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Locator, expect

from tests.browser.conftest import PHONE, OpenTab, Server
from tests.browser.player import (
    choose_activity,
    draw,
    load_campaign,
    operator_headers,
    post,
    register,
    take_free_codes,
    token,
)

ACTIVITY, POOL, DRAWS = 100001, "five-off", 25
# The first draw wins the coupon (certain, stock 1); every later one the fallback.
CAMPAIGN = f"""awards:
  - {{id: 101, kind: thanks, title: Thanks for playing}}
  - {{id: 102, kind: coupon, title: Five off, config: {POOL}}}
packs:
  - {{id: 11, total: 40, day: 40, month: 40}}
strategies:
  - {{id: 1001, fallback: {{award: 101}}, prizes: [{{award: 102, rate: 1, stock: 1}}]}}
activities:
  - {{id: {ACTIVITY}, name: Many draws, strategy: 1001, state: running, welcome_pack: 11,
     begin_at: 2026-01-01T00:00:00+08:00, end_at: 2030-01-01T00:00:00+08:00}}
code_pools:
  {POOL}: [FIVE-1]
"""


def orders(items: Locator) -> list[str | None]:
    return [items.nth(i).get_attribute("data-order") for i in range(items.count())]


def test_more_prizes_and_one_delivered_late(serve: Callable[..., Server], tab: OpenTab) -> None:
    # One delivery attempt, so the coupon's fails at once; draws as fast as the test sends them.
    server = serve(RAFFLE_DELIVERY_ATTEMPTS="1", RAFFLE_DRAWS_PER_SECOND="1000")
    admin = operator_headers(server)
    assert load_campaign(server, admin, CAMPAIGN).status_code == 200
    take_free_codes(server, POOL)  # the coupon won first finds its pool empty
    player = tab(server.url + "/", PHONE)
    page = player.page
    register(page, "player1")
    choose_activity(page, ACTIVITY)
    me = {"Authorization": f"Bearer {token(page)}"}
    won = [post(server, f"/api/activities/{ACTIVITY}/draws", me).json() for _ in range(DRAWS)]
    assert all("order_id" in w for w in won), won
    assert [w["award_id"] for w in won] == [102] + [101] * (DRAWS - 1)
    newest_first = [w["order_id"] for w in reversed(won)]

    page.reload()
    items = page.get_by_test_id("my-prize")
    expect(items).to_have_count(20)  # the newest page
    assert orders(items) == newest_first[:20]
    more = page.get_by_test_id("more-prizes")
    more.click()
    expect(items).to_have_count(DRAWS)
    assert orders(items) == newest_first  # the older page below, nothing twice
    expect(more).to_have_count(0)  # the end
    coupon = page.locator(f'[data-testid=my-prize][data-order="{won[0]["order_id"]}"]')
    expect(coupon).to_have_attribute("data-state", "failed")
    expect(coupon.get_by_test_id("state")).to_have_text("delayed, we are on it")

    # An operator adds a code and sends the delivery again: the page, which reads undelivered
    # prizes again by itself (even one from an older page), shows it delivered.
    added = post(server, f"/api/admin/code-pools/{POOL}/codes", admin, json={"codes": ["FIVE-2"]})
    assert added.status_code == 200, added.text
    sent = post(server, f"/api/admin/deliveries/{won[0]['order_id']}/resend", admin)
    assert sent.status_code == 200, sent.text
    expect(coupon).to_have_attribute("data-state", "completed", timeout=20_000)
    expect(coupon.get_by_test_id("delivery")).to_have_text("code FIVE-2")
    expect(coupon.get_by_test_id("state")).to_have_text("delivered")

    assert draw(page) == "Thanks for playing"  # a draw reads the newest again...
    expect(items).to_have_count(DRAWS + 1)
    assert orders(items)[1:] == newest_first  # ...and keeps the older page shown
    player.screenshot("my-prizes-phone")
    assert player.errors == []
