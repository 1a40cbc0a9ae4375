"""A delivery that failed, sent again from the operator console: a coupon pool of two codes
shared by two activities, of which an operator mistake (the free code deleted from the
database by hand) leaves one, so the second win finds the pool empty; the operator adds a
code and clicks "Send again", and the player gets it."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.conftest import DESKTOP, PASSWORD, PHONE, OpenTab, Server
from tests.browser.player import (
    choose_activity,
    draw,
    load_campaign,
    operator_headers,
    post,
    register,
    take_free_codes,
)

POOL = "five-off"
AWARDS = """awards:
  - {id: 101, kind: thanks, title: Thanks for playing}
  - {id: 102, kind: coupon, title: Five off, config: five-off}
packs:
  - {id: 11, total: 3, day: 3, month: 3}
"""


def campaign(*activities: tuple[int, int], codes: str = "") -> str:
    """A file of the awards and, per (activity, strategy), a strategy whose one prize is the
    coupon, certain (rate 1, stock 1), and a running activity drawing from it."""
    strategies = "".join(
        f"  - {{id: {s}, fallback: {{award: 101}}, prizes: [{{award: 102, rate: 1, stock: 1}}]}}\n"
        for _, s in activities
    )
    running = "".join(
        f"  - {{id: {a}, name: Activity {a}, strategy: {s}, state: running, welcome_pack: 11,\n"
        "     begin_at: 2026-01-01T00:00:00+08:00, end_at: 2030-01-01T00:00:00+08:00}\n"
        for a, s in activities
    )
    pools = f"code_pools:\n  {POOL}: [{codes}]\n" if codes else ""
    return f"{AWARDS}strategies:\n{strategies}activities:\n{running}{pools}"


def prize_in(page: Page, activity: int) -> str:
    """Win the coupon in an activity on the player page; the order id of the win."""
    mine = page.get_by_test_id("my-prize")
    before = {mine.nth(i).get_attribute("data-order") for i in range(mine.count())}
    choose_activity(page, activity)
    assert draw(page) == "Five off"
    expect(mine).to_have_count(len(before) + 1)
    (order,) = {mine.nth(i).get_attribute("data-order") for i in range(mine.count())} - before
    assert order
    return order


def test_an_operator_sends_a_failed_delivery_again(one_try_server: Server, tab: OpenTab) -> None:
    server = one_try_server
    admin = operator_headers(server)
    loaded = load_campaign(
        server, admin, campaign((100001, 1001), (100002, 1002), codes="FIVE-1, FIVE-2")
    )
    assert loaded.status_code == 200, loaded.text
    # A third strategy from a file of its own counts the stored two: the pool is short.
    refused = load_campaign(server, admin, campaign((100003, 1003)))
    assert refused.status_code == 422, refused.text
    assert "stored strategies 1001, 1002 among them" in refused.text

    player = tab(server.url + "/", PHONE)
    register(player.page, "player1")
    first = prize_in(player.page, 100001)
    delivered = player.page.locator(f'[data-testid=my-prize][data-order="{first}"]')
    expect(delivered).to_have_attribute("data-state", "completed")
    expect(delivered.get_by_test_id("delivery")).to_have_text("code FIVE-1")
    take_free_codes(server, POOL)
    order = prize_in(player.page, 100002)
    stuck = player.page.locator(f'[data-testid=my-prize][data-order="{order}"]')
    expect(stuck).to_have_attribute("data-state", "failed")  # the pool is empty
    expect(stuck.get_by_test_id("state")).to_have_text("delayed, we are on it")

    console = tab(server.url + "/console", DESKTOP, time_zone="America/New_York")
    page = console.page
    page.locator("#login-name").fill("operator")
    page.locator("#login-password").fill(PASSWORD)
    page.locator("#login").click()
    page.locator("#tab-live").click()
    page.locator("#live-activity").select_option("100002")
    expect(page.get_by_test_id("stat-failed").locator("strong")).to_have_text("1")
    row = page.get_by_test_id("failed-table").locator(f'tr[data-order="{order}"]')
    expect(row).to_contain_text("102")
    expect(row.locator("[data-col=error]")).to_contain_text("code_pool_empty")  # why
    expect(row.locator("[data-col=won-at]")).to_contain_text(" EST")  # the browser's zone, named
    console.screenshot("console-failed-desktop")

    added = post(server, f"/api/admin/code-pools/{POOL}/codes", admin, json={"codes": ["FIVE-3"]})
    assert added.status_code == 200, added.text
    row.get_by_role("button", name="Send again").click()
    expect(page.locator("#notice")).to_contain_text(f"Order {order} sent again.")
    expect(page.get_by_test_id("no-failures")).to_be_visible()
    expect(page.get_by_test_id("stat-failed").locator("strong")).to_have_text("0")

    # The player's page reads an undelivered prize again by itself (every 8 s at the most).
    expect(stuck).to_have_attribute("data-state", "completed", timeout=20_000)
    expect(stuck.get_by_test_id("delivery")).to_have_text("code FIVE-3")
    assert console.errors == []
    assert player.errors == []
