"""A prize's claim terms in the console's campaign editor: a validity chosen and filled in, a
wrong number shown next to its field, then saved and published with the odds."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, OpenTab, Server
from tests.browser.player import load_campaign, operator_headers
from tests.browser.test_console import log_in

ACTIVITY = 100001
CAMPAIGN = f"""awards:
  - {{id: 101, kind: thanks, title: Thanks for playing}}
  - {{id: 102, kind: physical, title: Lamp}}
strategies:
  - {{id: 1001, fallback: 101, prizes: [{{award: 102, rate: 0.5, stock: 5}}]}}
activities:
  - {{id: {ACTIVITY}, name: Lamps, strategy: 1001,
     begin_at: 2026-01-01T00:00:00+08:00, end_at: 2030-01-01T00:00:00+08:00}}
"""
PROVOKED = "Failed to load resource: the server responded with a status of 422"


def test_an_operator_gives_a_prize_seven_days_and_a_phone(
    blank_server: Server, tab: OpenTab
) -> None:
    admin = operator_headers(blank_server)
    assert load_campaign(blank_server, admin, CAMPAIGN).status_code == 200
    console = tab(blank_server.url + "/console", DESKTOP)
    page = console.page
    log_in(console, blank_server.operator("editor"))
    at = "#f-strategies-0-prizes-0-claim-validity"
    page.locator(f"{at}-kind").select_option("days")
    page.locator(f"{at}-days").fill("0")
    page.locator("#f-strategies-0-prizes-0-claim-conditions").fill("phone, attrs.member")
    page.locator("#save").click()
    problem = page.locator('.field-error[data-for="strategies.0.prizes.0.claim.validity.days"]')
    expect(problem).to_contain_text("greater than or equal to 1")
    page.locator(f"{at}-days").fill("7")
    page.locator("#save").click()
    expect(page.locator("#notice")).to_contain_text("Saved")

    odds = httpx.get(f"{blank_server.url}/api/activities/{ACTIVITY}", headers=admin).json()
    (prize,) = odds["prizes"]
    assert prize["claim"]["validity"]["days"] == 7
    assert prize["claim"]["conditions"] == ["phone", "attrs.member"]
    assert [e[: len(PROVOKED)] for e in console.errors] == [PROVOKED]
