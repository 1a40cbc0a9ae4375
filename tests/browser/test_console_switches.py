"""The console's switches in a real browser: an operator pauses the demo activity's draws
(a player's draw is refused with 503 `draws_paused`), sees the change listed with their
name, and switches the draws back on."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PASSWORD, OpenTab, Server
from tests.browser.test_console import log_in

ACTIVITY = 100301
SWITCH = f"activity.{ACTIVITY}.draws"


def _player(server: Server, name: str) -> dict[str, str]:
    credentials = {"name": name, "password": PASSWORD}
    assert httpx.post(f"{server.url}/api/auth/register", json=credentials).status_code == 201
    token = httpx.post(f"{server.url}/api/auth/login", json=credentials).json()["token"]
    return {"Authorization": f"Bearer {token}"}


def _draw(server: Server, auth: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{server.url}/api/activities/{ACTIVITY}/draws", headers=auth)


def test_an_operator_pauses_and_resumes_draws_from_the_console(
    demo_server: Server, tab: OpenTab
) -> None:
    operator = demo_server.operator()
    player = _player(demo_server, "pia")
    console = tab(demo_server.url + "/console", DESKTOP)
    log_in(console, operator)
    console.page.get_by_role("tab", name="Switches").click()
    row = console.page.locator(f'[data-switch="{SWITCH}"]')
    expect(row.get_by_test_id("state")).to_have_text("on")
    expect(console.page.get_by_test_id("no-changes")).to_be_visible()

    row.get_by_test_id("toggle").click()
    expect(row.get_by_test_id("state")).to_have_text("off")
    refused = _draw(demo_server, player)
    assert (refused.status_code, refused.json()["code"]) == (503, "draws_paused")
    audit = console.page.get_by_test_id("switch-audit").locator("tbody tr")
    expect(audit).to_have_count(1)
    expect(audit.first).to_contain_text(operator)
    expect(audit.first).to_contain_text(SWITCH)
    console.screenshot("console-switches")

    row.get_by_test_id("toggle").click()
    expect(row.get_by_test_id("state")).to_have_text("on")
    expect(audit).to_have_count(2)
    assert _draw(demo_server, player).status_code == 201
    assert console.errors == []
