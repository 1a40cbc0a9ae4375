"""Participation policies in a real browser: an operator attaches a members-only policy to
the demo activity in the console; a player outside it is refused with a readable reason and
keeps the chance; once the operator removes it, the player draws."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser import player
from tests.browser.conftest import DESKTOP, OpenTab, Server
from tests.browser.test_console import log_in

ACTIVITY = 100301


def test_an_operator_attaches_a_policy_and_a_player_outside_it_is_told_why(
    demo_server: Server, tab: OpenTab
) -> None:
    console = tab(demo_server.url + "/console", DESKTOP)
    log_in(console, demo_server.operator())
    # The demo's running activity opens the live view once loaded: then the tab is clicked.
    expect(console.page.locator("#tab-live")).to_have_attribute("aria-selected", "true")
    console.page.get_by_role("tab", name="Policies").click()
    expect(console.page.get_by_test_id("no-policies")).to_be_visible()
    console.page.get_by_test_id("add-policy").click()
    row = console.page.locator('[data-policy="0"]')
    row.get_by_label("Tag").fill("members")
    row.get_by_label("Joins: count").fill("3")
    row.get_by_label("Joins: period").select_option("week")
    console.page.get_by_test_id("save-policies").click()
    expect(console.page.locator("#notice")).to_contain_text("saved")
    expect(console.page.locator('[data-policy="0"]').get_by_label("Tag")).to_have_value("members")
    console.screenshot("console-policies")

    page = tab(demo_server.url + "/", DESKTOP)
    player.register(page.page, "outsider")
    player.choose_activity(page.page, ACTIVITY)
    before = player.chances(page.page)
    page.page.get_by_test_id("draw").click()
    expect(page.page.locator("#notice")).to_have_text(
        "You cannot take part in this activity now: it is for selected players only"
    )
    expect(page.page.get_by_test_id("chances")).to_have_attribute("data-chances", str(before))

    console.page.get_by_label("Remove policy").click()
    console.page.get_by_test_id("save-policies").click()
    expect(console.page.get_by_test_id("no-policies")).to_be_visible()
    page.page.reload()
    player.choose_activity(page.page, ACTIVITY)
    assert player.draw(page.page)
    assert console.errors == []
    assert all("403" in error for error in page.errors), page.errors
