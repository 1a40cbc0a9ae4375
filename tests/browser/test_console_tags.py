"""The console's Tags tab in a real browser: a malformed condition is refused with the cursor
put at its line and column, a dynamic and a static tag are saved, members added, and the
preview counts the accounts a tag holds."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, OpenTab, Server
from tests.browser.test_console import log_in


def test_an_operator_defines_tags_and_is_shown_where_a_condition_is_wrong(
    demo_server: Server, tab: OpenTab
) -> None:
    console = tab(demo_server.url + "/console", DESKTOP)
    operator = demo_server.operator()
    log_in(console, operator)
    page = console.page
    page.get_by_role("tab", name="Tags").click()
    expect(page.get_by_test_id("no-tags")).to_be_visible()

    page.get_by_label("Name").fill("seniors")
    page.get_by_label("Condition").fill("level >= 1 and\n  age > > 50")
    page.get_by_test_id("save-tag").click()
    expect(page.get_by_test_id("condition-error")).to_have_text("Line 2, column 9.")
    expect(page.get_by_role("alert")).to_contain_text("line 2, column 9")

    page.get_by_label("Condition").fill("level >= 1 and\n  age > 50")
    page.get_by_test_id("save-tag").click()
    row = page.locator('[data-tag="seniors"]')
    expect(row).to_contain_text("age > 50")

    page.get_by_label("Name").fill("loyal")  # seed 004's clause: field, operator, value
    page.get_by_label("Field").select_option("level")
    page.get_by_label("Operator").select_option("in")
    page.get_by_label("Value").fill("3, 4")
    page.get_by_test_id("save-clause").click()
    expect(page.locator('[data-tag="loyal"]')).to_contain_text("level == 3 or level == 4")

    page.get_by_label("Name").fill("beta")
    page.get_by_label("Kind").select_option("static")
    page.get_by_test_id("save-tag").click()
    beta = page.locator('[data-tag="beta"]')
    beta.get_by_role("button", name="Members").click()
    page.get_by_label("User ids").fill(f"ann\nbob, {operator}")
    page.get_by_role("button", name="Add").click()
    expect(page.get_by_test_id("members")).to_have_text(f"ann, bob, {operator}")
    console.screenshot("console-tags")

    beta.get_by_test_id("preview").click()
    expect(page.get_by_test_id("matched")).to_have_text("1")  # the one with an account
    refused = "Failed to load resource: the server responded with a status of 422"
    assert console.errors == [f"{refused} (Unprocessable Entity)"], "only the refused save"
