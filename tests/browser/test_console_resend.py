"""A delivery that failed, sent again from the operator console: a coupon pool of one code
shared by two activities whose strategies were loaded in separate files (the loader sums
coupon stock per file, docs/campaign-file.md#code-pools), so the second win finds the pool
empty; the operator adds a code and clicks "Send again", and the player gets it."""

from __future__ import annotations

import uuid

import httpx
from playwright.sync_api import Page, expect

from tests.browser.conftest import DESKTOP, PASSWORD, PHONE, OpenTab, Server
from tests.browser.player import choose_activity, draw, operator_headers, register

POOL = "five-off"
AWARDS = """awards:
  - {id: 101, kind: thanks, title: Thanks for playing}
  - {id: 102, kind: coupon, title: Five off, config: five-off}
packs:
  - {id: 11, total: 3, day: 3, month: 3}
"""


def strategy(activity: int, strategy_id: int) -> str:
    """A strategy whose one prize is the coupon, certain (rate 1, stock 1), and a running
    activity drawing from it."""
    return f"""strategies:
  - id: {strategy_id}
    fallback: {{award: 101}}
    prizes:
      - {{award: 102, rate: 1, stock: 1}}
activities:
  - id: {activity}
    name: Activity {activity}
    strategy: {strategy_id}
    begin_at: 2026-01-01T00:00:00+08:00
    end_at: 2030-01-01T00:00:00+08:00
    state: running
    welcome_pack: 11
"""


def post(server: Server, path: str, headers: dict[str, str], **body: object) -> httpx.Response:
    return httpx.post(
        server.url + path, headers={**headers, "Idempotency-Key": str(uuid.uuid4())}, **body
    )


def load(server: Server, headers: dict[str, str], text: str) -> httpx.Response:
    yaml = {**headers, "Content-Type": "application/yaml"}
    return post(server, "/api/admin/campaigns", yaml, content=text)


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
    codes = f"code_pools:\n  {POOL}: [FIVE-0001]\n"
    # One file asking two units of stock from a pool of one code is refused...
    refused = load(
        server,
        admin,
        AWARDS
        + "strategies:\n"
        + "  - {id: 1001, fallback: {award: 101}, prizes: [{award: 102, rate: 1, stock: 1}]}\n"
        + "  - {id: 1002, fallback: {award: 101}, prizes: [{award: 102, rate: 1, stock: 1}]}\n"
        + codes,
    )
    assert refused.status_code == 422, refused.text
    assert "coupon stock 2" in refused.text
    # ...but each strategy in a file of its own passes: stock is summed per file, a known gap
    # (docs/campaign-file.md: "Prizes of strategies in other files are not summed in"). If
    # the loader comes to sum stored strategies too, this setup needs another real failure.
    for activity, strategy_id in ((100001, 1001), (100002, 1002)):
        loaded = load(server, admin, AWARDS + strategy(activity, strategy_id) + codes)
        assert loaded.status_code == 200, loaded.text

    player = tab(server.url + "/", PHONE)
    register(player.page, "player1")
    first = prize_in(player.page, 100001)
    delivered = player.page.locator(f'[data-testid=my-prize][data-order="{first}"]')
    expect(delivered).to_have_attribute("data-state", "completed")
    expect(delivered.get_by_test_id("delivery")).to_have_text("code FIVE-0001")
    order = prize_in(player.page, 100002)
    stuck = player.page.locator(f'[data-testid=my-prize][data-order="{order}"]')
    expect(stuck).to_have_attribute("data-state", "failed")  # the pool is empty
    expect(stuck.get_by_test_id("state")).to_have_text("delayed, we are on it")

    console = tab(server.url + "/console", DESKTOP)
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
    console.screenshot("console-failed-desktop")

    added = post(
        server, f"/api/admin/code-pools/{POOL}/codes", admin, json={"codes": ["FIVE-0002"]}
    )
    assert added.status_code == 200, added.text
    row.get_by_role("button", name="Send again").click()
    expect(page.locator("#notice")).to_contain_text(f"Order {order} sent again.")
    expect(page.get_by_test_id("no-failures")).to_be_visible()
    expect(page.get_by_test_id("stat-failed").locator("strong")).to_have_text("0")

    player.page.reload()
    expect(stuck).to_have_attribute("data-state", "completed")
    expect(stuck.get_by_test_id("delivery")).to_have_text("code FIVE-0002")
    assert console.errors == []
    assert player.errors == []
