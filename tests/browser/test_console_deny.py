"""The console's deny lists in a real browser: an operator adds a blocking rule, a script's
refused draws (of activities that do not exist) put the player on the list by themselves,
the entry shows its evidence, and lifting it from the console lets the player draw again;
an entry added by hand is listed with the operator's name."""

from __future__ import annotations

import uuid

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PASSWORD, OpenTab, Server
from tests.browser.test_console import log_in

ACTIVITY = 100301
NOWHERE = 999999


def _login(server: Server, name: str) -> dict[str, str]:
    credentials = {"name": name, "password": PASSWORD}
    token = httpx.post(f"{server.url}/api/auth/login", json=credentials).json()["token"]
    return {"Authorization": f"Bearer {token}"}


def _draw(server: Server, auth: dict[str, str], activity: int = ACTIVITY) -> httpx.Response:
    key = {"Idempotency-Key": str(uuid.uuid4())}
    return httpx.post(f"{server.url}/api/activities/{activity}/draws", headers=auth | key)


def test_an_operator_sees_an_automatic_entry_with_its_evidence_and_lifts_it(
    demo_server: Server, tab: OpenTab
) -> None:
    operator = demo_server.operator()
    demo_server.raffle("user", "create", "mallory", "--password", PASSWORD)
    player = _login(demo_server, "mallory")
    console = tab(demo_server.url + "/console", DESKTOP)
    log_in(console, operator)
    console.page.get_by_role("tab", name="Deny lists").click()
    expect(console.page.get_by_test_id("no-entries")).to_be_visible()
    rule = console.page.get_by_test_id("rule-form")
    rule.get_by_label("More than").fill("5")
    rule.get_by_role("button", name="Add rule").click()
    expect(console.page.get_by_test_id("block-rules").locator("tbody tr")).to_have_count(1)

    # A script probing activities that do not exist: each draw refused, and counted.
    codes = [_draw(demo_server, player, NOWHERE).status_code for _ in range(8)]
    assert codes == [404] * 6 + [403] * 2
    console.page.get_by_role("button", name="Filter").click()
    row = console.page.get_by_test_id("deny-entries").locator("tbody tr")
    expect(row).to_have_count(1)
    expect(row.first).to_contain_text("mallory")
    expect(row.first.get_by_test_id("evidence")).to_contain_text("6 refused draws in 1 min")
    console.screenshot("console-deny")

    row.first.get_by_test_id("lift").click()
    expect(console.page.get_by_test_id("no-entries")).to_be_visible()
    assert _draw(demo_server, player).status_code == 201

    form = console.page.get_by_test_id("deny-form")
    form.get_by_label("Kind").select_option("ip")
    form.get_by_label("Value").fill("198.51.100.0/24")
    form.get_by_label("Reason").fill("a bot farm")
    form.get_by_role("button", name="Deny").click()
    expect(row).to_have_count(1)
    expect(row.first).to_contain_text("198.51.100.0/24")
    expect(row.first).to_contain_text(operator)
    assert console.errors == []
