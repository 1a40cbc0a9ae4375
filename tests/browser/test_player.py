"""The player page in a real browser: register, sign in, draw until the chances run out, follow
a prize's delivery, buy chances with points; one draw per double click; the messages of an
expired session and a closed activity."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import httpx
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import DESKTOP, PHONE, OpenTab, Server
from tests.browser.player import (
    chances,
    choose_activity,
    draw,
    log_in,
    operator_headers,
    register,
    token,
)

DEMO = 100301
ACTIVITY = 200101
# The demo activity's prizes include chances, so drawing there never runs out, and its
# cheapest SKU costs ten sign-ins. An operator loads this small campaign instead, as one
# would for a promotion: 3 welcome chances, a sign-in worth 30 points, a SKU of 2 chances for
# 20 points; from the 2nd draw only the lamp (a weight tier), so a physical prize is won. No
# prize gives points or chances: the counts the test checks are its own doing.
CAMPAIGN = f"""
awards:
  - {{id: 201, kind: physical, title: 小米台灯}}
  - {{id: 202, kind: coupon, title: 10 元优惠券, config: cny-10}}
  - {{id: 203, kind: content, title: 会员月卡, config: vip-1}}
  - {{id: 204, kind: thanks, title: 谢谢参与}}
strategies:
  - id: 2001
    description: 九宫格
    fallback: 204
    rules: {{weight: "2:201"}}
    prizes:
      - {{award: 201, rate: 0.3, stock: 50}}
      - {{award: 202, rate: 0.4, stock: 3}}
      - {{award: 203, rate: 0.1, stock: 10, rules: {{lock: 5}}}}
packs:
  - {{id: 21, total: 3, day: 3, month: 30}}
  - {{id: 22, total: 2, day: 2, month: 2}}
activities:
  - {{id: {ACTIVITY}, name: 双十二幸运九宫格, description: 每天签到送积分, strategy: 2001,
     begin_at: "2026-01-01T00:00:00+08:00", end_at: "2030-01-01T00:00:00+08:00",
     state: running, welcome_pack: 21}}
skus:
  - {{sku: 9201, activity: {ACTIVITY}, pack: 22, stock: 100, price_points: 20}}
rebates:
  - {{activity: {ACTIVITY}, behaviour: sign_in, points: 30, description: 每日签到}}
code_pools:
  cny-10: [C10-AAAA1, C10-BBBB2, C10-CCCC3]
"""


def _load_campaign(server: Server) -> None:
    headers = {**operator_headers(server), "Content-Type": "application/yaml"}
    answer = httpx.post(f"{server.url}/api/admin/campaigns", headers=headers, content=CAMPAIGN)
    assert answer.status_code == 200, answer.text


def _no_sideways_scroll(page: Page) -> None:
    viewport = page.viewport_size
    assert viewport is not None
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]


def _sign_in(page: Page) -> None:
    page.get_by_test_id("sign-in").click()
    expect(page.get_by_test_id("sign-in")).to_be_disabled()
    today = datetime.now(ZoneInfo("Asia/Shanghai")).day
    expect(page.locator(f"[data-testid=calendar] [data-day='{today}']")).to_have_class(
        "day signed today"
    )
    expect(page.get_by_test_id("streak")).to_have_attribute("data-streak", "1")
    expect(page.get_by_test_id("points")).to_have_attribute("data-available", "30")


def _draw_until_out(page: Page) -> list[str]:
    start = chances(page)
    assert start == 3  # the welcome pack; the sign-in gave points only
    cell = page.locator("[data-testid=cell][data-award='203']")
    expect(cell.get_by_test_id("lock")).to_have_text("unlocks after 4 more draws")
    won = []
    while page.get_by_test_id("draw").is_enabled():
        won.append(draw(page))
        assert len(won) <= start, "drew more than the chances shown"
    assert len(won) == start
    expect(page.get_by_test_id("draw-reason")).to_have_text(
        "No chances left. Sign in daily or spend points for more."
    )
    expect(cell.get_by_test_id("lock")).to_have_text("unlocks after 1 more draw")
    assert won[1:] == ["小米台灯", "小米台灯"]  # the tier from draw 2 on
    lit = page.locator("[data-testid=cell].lit")
    expect(lit).to_have_attribute("data-award", "201")
    return won


def _give_address(page: Page) -> None:
    lamp = page.get_by_test_id("my-prize").first  # newest first: the last draw, the lamp
    expect(lamp).to_have_attribute("data-state", "completed")
    expect(lamp.get_by_test_id("delivery")).to_have_text("waiting for your address")
    _fill_address(lamp, phone="138 0013 8000")
    expect(page.get_by_test_id("my-prize").first.get_by_test_id("delivery")).to_have_text(
        "address received, to be shipped"
    )


def _fill_address(prize: Locator, phone: str) -> None:
    prize.get_by_label("Recipient").fill("张三")
    prize.get_by_label("Phone").fill(phone)
    prize.get_by_label("Region").fill("上海市 浦东新区")
    prize.get_by_label("Address").fill("世纪大道 100 号")
    prize.get_by_role("button", name="Save address").click()


def _buy_chances(page: Page) -> None:
    page.locator("[data-testid=sku][data-sku='9201']").get_by_role("button").click()
    expect(page.get_by_test_id("points")).to_have_attribute("data-available", "10")
    expect(page.get_by_test_id("chances")).to_have_attribute("data-chances", "2")
    expect(page.get_by_test_id("draw")).to_be_enabled()
    # 10 points left, the SKU costs 20: the page does not offer what the API would refuse
    expect(
        page.locator("[data-testid=sku][data-sku='9201']").get_by_role("button")
    ).to_be_disabled()


def test_a_player_signs_in_draws_out_follows_the_prize_and_buys_chances(
    demo_server: Server, tab: OpenTab
) -> None:
    _load_campaign(demo_server)
    opened = tab(demo_server.url, DESKTOP)
    page = opened.page
    page.emulate_media(reduced_motion="reduce")  # the board lands at once: a fast test
    register(page, "alice")
    choose_activity(page, ACTIVITY)
    assert page.url.endswith(f"#/activity/{ACTIVITY}")
    expect(page.get_by_test_id("activity").locator("option:checked")).to_have_text(
        "双十二幸运九宫格 (running)"
    )
    _sign_in(page)
    won = _draw_until_out(page)
    expect(page.get_by_test_id("my-prize")).to_have_count(len(won))
    _give_address(page)
    _buy_chances(page)
    lamps = won.count("小米台灯")
    expect(page.locator("[data-testid=odds] tr[data-award='201'] td").nth(2)).to_have_text(
        f"{50 - lamps} / 50"
    )
    _no_sideways_scroll(page)
    opened.screenshot("player-desktop")
    page.set_viewport_size(PHONE)
    _no_sideways_scroll(page)
    opened.screenshot("player-phone")
    assert opened.errors == []


def test_a_double_click_draws_once(demo_server: Server, tab: OpenTab) -> None:
    opened = tab(demo_server.url, PHONE)
    page = opened.page
    register(page, "bob")
    expect(page.get_by_test_id("board")).to_have_attribute("data-activity", str(DEMO))
    assert chances(page) == 3
    page.get_by_test_id("draw").dblclick()
    expect(page.get_by_test_id("board")).to_have_attribute("data-state", "done")
    page.wait_for_timeout(300)  # a second draw, had one been sent, would be in by now
    auth = {"Authorization": f"Bearer {token(page)}"}
    history = httpx.get(f"{demo_server.url}/api/activities/{DEMO}/draws", headers=auth).json()
    assert len(history["draws"]) == 1
    expect(page.get_by_test_id("board")).to_have_attribute("data-draws", "1")
    _no_sideways_scroll(page)
    # The page reads its prizes again until the one won is delivered: a read still in flight
    # when the session ends is refused, a 401 in the console. Delivered, it reads no more.
    expect(page.get_by_test_id("my-prize")).to_have_attribute("data-state", "completed")
    page.get_by_test_id("logout").click()
    expect(page.get_by_test_id("login")).to_be_visible()
    assert httpx.get(f"{demo_server.url}/api/auth/me", headers=auth).status_code == 401
    assert opened.errors == []


def test_errors_say_what_happened(demo_server: Server, tab: OpenTab) -> None:
    """Session expired (twice: mid-session, and a stale token on load), an address refused
    field by field, the activity closed: each provoked 4xx is the only console error."""
    _load_campaign(demo_server)
    opened = tab(demo_server.url + f"/#/activity/{ACTIVITY}", DESKTOP)
    page = opened.page
    page.emulate_media(reduced_motion="reduce")
    notice = page.locator("#notice")
    register(page, "carol")
    _session_expires(page, demo_server)
    log_in(page, "carol")
    expect(page.get_by_test_id("board")).to_have_attribute("data-activity", str(ACTIVITY))
    assert [draw(page), draw(page)][1] == "小米台灯"
    lamp = page.get_by_test_id("my-prize").first
    _fill_address(lamp, phone="call me")
    expect(notice).to_have_text("Please check the address: see the fields marked.")
    expect(lamp.locator(".field-error[data-for=phone]")).to_contain_text("digits")
    expect(lamp.get_by_label("Phone")).to_have_attribute("aria-invalid", "true")
    expect(lamp.locator(".field-error[data-for=name]")).to_have_text("")
    _activity_closes(page, demo_server)
    statuses = [e.split("status of ")[-1][:3] for e in opened.errors]
    assert statuses == ["401", "401", "422", "409"], opened.errors


def _session_expires(page: Page, server: Server) -> None:
    notice = page.locator("#notice")
    # Every read the page makes on entering is answered first: one still in flight when the
    # session ends would be refused too, a second 401 (a fresh-clone CI run caught that race).
    expect(page.get_by_text("No prizes yet. Draw to win one.")).to_be_visible()
    # The session ends elsewhere (another tab logged out): the next action says so.
    auth = {"Authorization": f"Bearer {token(page)}"}
    assert httpx.post(f"{server.url}/api/auth/logout", headers=auth).status_code == 204
    page.get_by_test_id("sign-in").click()
    expect(notice).to_have_text("Your session has expired. Please log in again.")
    expect(page.get_by_test_id("login")).to_be_visible()
    # A stale token found on load: the same message, and the login form.
    log_in(page, "carol")
    # Set as the page reloads: the page in flight cannot clear it (an answer 401 to a request
    # made with it would).
    page.add_init_script("localStorage.setItem('raffle.token', 'stale')")
    page.reload()
    expect(notice).to_have_text("Your session has expired. Please log in again.")
    expect(page.get_by_test_id("login")).to_be_visible()


def _activity_closes(page: Page, server: Server) -> None:
    close = f"{server.url}/api/admin/activities/{ACTIVITY}/close"
    assert httpx.post(close, headers=operator_headers(server, "closer")).status_code == 200
    expect(page.get_by_test_id("draw")).to_be_enabled()  # the page has not heard yet
    page.get_by_test_id("draw").click()
    expect(page.locator("#notice")).to_have_text("This activity is closed now.")
    expect(page.get_by_test_id("board")).to_have_attribute("data-state", "error")
    expect(page.get_by_test_id("draw")).to_be_disabled()
    expect(page.get_by_test_id("draw-reason")).to_have_text("This activity is closed now.")
    # nor does it offer a sign-in the closed activity would refuse
    expect(page.get_by_test_id("sign-in")).to_be_disabled()
