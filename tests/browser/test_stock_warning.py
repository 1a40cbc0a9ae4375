"""Stock warnings in the operator console: a prize whose stock falls to its warning threshold
shows a badge in the live view, on the prize and on the activity."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PASSWORD, OpenTab, Server
from tests.browser.player import load_campaign, operator_headers, post

ACTIVITY = 100501
CAMPAIGN = f"""awards:
  - {{id: 101, kind: thanks, title: Thanks for playing}}
  - {{id: 102, kind: physical, title: Desk lamp}}
strategies:
  - id: 1005
    fallback: 101
    prizes:
      - {{award: 102, rate: 1, stock: 5, warning_surplus: 2}}
packs:
  - {{id: 11, total: 10, day: 10, month: 10}}
activities:
  - {{id: {ACTIVITY}, name: Lamps, strategy: 1005, state: running, welcome_pack: 11,
     begin_at: 2026-01-01T00:00:00+08:00, end_at: 2030-01-01T00:00:00+08:00}}
"""


def test_an_operator_sees_the_warning_badge_when_stock_falls(
    blank_server: Server, tab: OpenTab
) -> None:
    server = blank_server
    admin = operator_headers(server)
    loaded = load_campaign(server, admin, CAMPAIGN)
    assert loaded.status_code == 200, loaded.text

    console = tab(server.url + "/console", DESKTOP)
    page = console.page
    page.locator("#login-name").fill("operator")
    page.locator("#login-password").fill(PASSWORD)
    page.locator("#login").click()
    page.locator("#tab-live").click()
    page.locator("#live-activity").select_option(str(ACTIVITY))
    row = page.get_by_test_id("prize-table").locator("tr[data-award='102']")
    expect(row.locator("[data-col=stock]")).to_have_text("5")
    expect(row.get_by_test_id("stock-warning")).to_have_count(0)
    expect(page.get_by_test_id("activity-stock-warning")).to_have_count(0)

    for _ in range(3):  # 5 -> 2 left: the threshold
        drawn = post(server, f"/api/activities/{ACTIVITY}/draws", admin)
        assert drawn.status_code == 201, drawn.text
        assert drawn.json()["award_id"] == 102

    # The live view reads again every 3 s by itself.
    expect(row.get_by_test_id("stock-warning")).to_have_text("low stock: 2 left")
    expect(page.get_by_test_id("activity-stock-warning")).to_contain_text("Low stock")
    expect(page.get_by_test_id("activity-stock-warning")).to_contain_text("Desk lamp (2 left")
    console.screenshot("console-stock-warning-desktop")

    page.locator("#tab-campaign").click()
    expect(page.locator("[name='strategies.0.prizes.0.warning_surplus']")).to_have_value("2")
    assert console.errors == []
