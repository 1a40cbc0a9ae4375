"""Join codes in real browsers: the demo activity requires one; the operator generates codes
in the console's Codes tab and sees the counts; a player without a code is told so, a wrong
code is refused in words, the right one lets them draw, and the console counts it used."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import httpx
from playwright.sync_api import expect

from tests.browser import player
from tests.browser.conftest import DESKTOP, OpenTab, Server
from tests.browser.test_console import log_in

ACTIVITY = 100301
DEMO = Path(__file__).parents[2] / "examples" / "big-market.yaml"
WELCOME = "    welcome_pack: 11              # granted on a user's first visit\n"


def test_an_operator_makes_codes_and_a_player_redeems_one_to_draw(
    demo_server: Server, tab: OpenTab
) -> None:
    headers = player.operator_headers(demo_server)
    text = DEMO.read_text().replace(WELCOME, WELCOME + "    join_code_required: true\n")
    assert player.load_campaign(demo_server, headers, text).status_code == 200

    console = tab(demo_server.url + "/console", DESKTOP)
    log_in(console, "operator")
    console.page.get_by_role("tab", name="Codes").click()
    made = console.page.get_by_test_id("generate-codes")
    made.get_by_label("How many").fill("3")
    made.get_by_label("Source").fill("poster")
    made.get_by_role("button", name="Generate").click()
    expect(console.page.locator("#notice")).to_have_text("3 codes generated (60 bits each).")
    counts = console.page.get_by_test_id("code-counts")
    expect(counts).to_have_attribute("data-unused", "3")
    exported = httpx.get(
        f"{demo_server.url}/api/admin/activities/{ACTIVITY}/join-codes.csv", headers=headers
    )
    code = next(csv.DictReader(io.StringIO(exported.text)))["code"]

    page = tab(demo_server.url + "/", DESKTOP)
    player.register(page.page, "coder")
    player.choose_activity(page.page, ACTIVITY)
    expect(page.page.get_by_test_id("draw-reason")).to_have_text(
        "This activity needs a join code: enter yours first."
    )
    expect(page.page.get_by_test_id("draw")).to_be_disabled()
    form = page.page.get_by_test_id("join-code")
    form.get_by_label("Join code").fill("ZZZZ-ZZZZ-ZZZZ")
    form.get_by_role("button", name="Use code").click()
    expect(page.page.locator("#notice")).to_have_text(
        "That join code is not right. Check it and try again."
    )
    form.get_by_label("Join code").fill(code.lower())
    form.get_by_role("button", name="Use code").click()
    shown = "-".join(code[i : i + 4] for i in range(0, 12, 4))
    expect(page.page.get_by_test_id("join-code")).to_have_attribute("data-code", shown)
    assert player.draw(page.page)
    page.screenshot("player-join-code")

    console.page.get_by_role("tab", name="Live").click()
    console.page.get_by_role("tab", name="Codes").click()
    expect(counts).to_have_attribute("data-used", "1")
    console.screenshot("console-codes")
    assert console.errors == []
    assert all("422" in error for error in page.errors), page.errors
