"""The operator console in a real browser: from an empty database an operator builds a
campaign in the forms (one field error shown next to its field, then fixed), moves the
activity through review to running, watches a player's win on the player page arrive in
the live view, and exports a file holding the new activity. A non-admin is turned away."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from zoneinfo import ZoneInfo

import httpx
from playwright.sync_api import Page, expect

from tests.browser.conftest import DESKTOP, PASSWORD, PHONE, OpenTab, Server, Tab
from tests.browser.player import chances, choose_activity, draw, register

ACTIVITY = 100001
CONFLICT = "Failed to load resource: the server responded with a status of 409 (Conflict)"
PROVOKED = [
    "Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)",
    CONFLICT,
]
# The browser's zone, neither UTC nor the activities' (Asia/Shanghai, as a new one starts).
LOCAL_ZONE = "America/New_York"  # EST in November
SHANGHAI_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:00\+08:00$")
EXPIRED = "Failed to load resource: the server responded with a status of 401 (Unauthorized)"


def log_in(tab: Tab, name: str) -> None:
    tab.page.locator("#login-name").fill(name)
    tab.page.locator("#login-password").fill(PASSWORD)
    tab.page.locator("#login").click()


def build_campaign(page: Page) -> None:
    """Two awards, a strategy whose one prize is certain (rate 1, stock 5), a pack, and an
    activity with a SKU and a welcome pack, all through the forms."""
    page.get_by_test_id("add-award").click()
    page.locator("#f-awards-0-kind").select_option("thanks")
    page.locator("#f-awards-0-title").fill("Thanks for playing")
    page.get_by_test_id("add-award").click()
    page.locator("#f-awards-1-kind").select_option("points")
    page.locator("#f-awards-1-title").fill("Ten points")
    page.locator("#f-awards-1-config").fill("10")
    page.get_by_test_id("add-strategy").click()
    page.locator("#f-strategies-0-description").fill("Launch odds")
    page.locator("#f-strategies-0-fallback").select_option("101")
    page.get_by_test_id("add-prize-0").click()
    page.locator("#f-strategies-0-prizes-0-award").select_option("102")
    page.locator("#f-strategies-0-prizes-0-rate").fill("1.5")  # refused by the server
    page.locator("#f-strategies-0-prizes-0-stock").fill("5")
    page.get_by_test_id("add-pack").click()
    page.get_by_test_id("add-activity").click()
    page.locator("#f-activities-0-name").fill("Launch")
    page.locator("#f-activities-0-welcome_pack").select_option("11")
    page.get_by_test_id(f"add-sku-{ACTIVITY}").click()
    page.locator("#f-skus-0-price_points").fill("50")


def _shown_in_another_zone(page: Page, typed: str) -> None:
    """The activity's times follow its time zone as one is typed in (the same instants)."""
    begins = page.locator("#f-activities-0-begin_at")
    page.locator("#f-activities-0-time_zone").fill("Europe/Berlin")
    expect(page.locator("label", has=begins)).to_contain_text("Begins (Europe/Berlin)")
    berlin = datetime.fromisoformat(typed).astimezone(ZoneInfo("Europe/Berlin")).isoformat()
    expect(begins).to_have_value(berlin)
    page.locator("#revert").click()
    expect(begins).to_have_value(typed)


def test_an_operator_builds_and_runs_an_activity_from_a_blank_database(
    blank_server: Server, tab: OpenTab
) -> None:
    operator = blank_server.operator()
    console = tab(blank_server.url + "/console", DESKTOP, time_zone=LOCAL_ZONE)
    page = console.page
    log_in(console, operator)
    expect(page.locator("#tab-campaign")).to_have_attribute("aria-selected", "true")
    build_campaign(page)
    begins = page.locator("#f-activities-0-begin_at")
    expect(page.locator("label", has=begins)).to_contain_text("Begins (Asia/Shanghai)")
    expect(begins).to_have_value(SHANGHAI_TIME)  # the activity's zone, not the browser's
    typed = begins.input_value()

    page.locator("#save").click()
    rate = page.locator("#f-strategies-0-prizes-0-rate")
    expect(rate).to_have_attribute("aria-invalid", "true")
    problem = page.locator('.field-error[data-for="strategies.0.prizes.0.rate"]')
    expect(problem).to_contain_text("rate must be between 0 and 1")
    console.screenshot("console-field-error-desktop")
    assert rate.evaluate("(input) => input.nextElementSibling.dataset.for") == (
        "strategies.0.prizes.0.rate"
    ), "the message sits right after its field"
    rate.fill("1")
    page.locator("#save").click()
    expect(page.locator("#notice")).to_contain_text("Saved")
    expect(page.locator(".field-error")).to_have_count(0)
    expect(begins).to_have_value(typed)  # stored in UTC, shown in the activity's zone again

    state = page.get_by_test_id(f"state-{ACTIVITY}")
    expect(state).to_have_text("edit")
    for action, reached in (("submit", "submitted"), ("approve", "approved"), ("start", "running")):
        page.get_by_test_id(f"act-{ACTIVITY}-{action}").click()
        expect(state).to_have_text(reached)
    # The scheduler (a tick a second) starts an approved activity whose window has opened:
    # now and then it gets there between Approve and Start, and Start is refused (409), as
    # the Close below is, showing the state the activity is in.
    started_by_scheduler = page.locator("#notice").inner_text().startswith("Not done")
    console.screenshot("console-campaign-desktop")

    rate.fill("0.5")  # the odds of a running activity are published: the server says no
    page.locator("#save").click()
    frozen = page.locator('.field-error[data-for="strategies.0"]')
    expect(frozen).to_contain_text(f"published by running activity {ACTIVITY}")
    page.locator("#revert").click()
    expect(page.locator("#f-strategies-0-prizes-0-rate")).to_have_value("1")
    _shown_in_another_zone(page, typed)

    # A player wins in it on the player page: rate 1 makes the prize certain.
    player = tab(blank_server.url + "/", PHONE)
    register(player.page, "player1")
    choose_activity(player.page, ACTIVITY)
    assert chances(player.page) == 3  # the welcome pack the operator chose
    assert draw(player.page) == "Ten points"

    page.locator("#tab-live").click()
    expect(page.locator("#live-activity")).to_have_value(str(ACTIVITY))
    expect(page.get_by_test_id("stat-draws").locator("strong")).to_have_text("1")
    prize = page.get_by_test_id("prize-table").locator('tr[data-award="102"]')
    expect(prize.locator('[data-col="wins"]')).to_have_text("1")
    expect(prize.locator('[data-col="stock"]')).to_have_text("5")
    expect(prize.locator('[data-col="left"]')).to_have_text("4")
    expect(page.get_by_test_id("draws-chart").locator('rect.bar[data-draws="1"]')).to_have_count(1)
    expect(page.get_by_text(f"Draws per minute ({LOCAL_ZONE} time)")).to_be_visible()
    expect(page.locator("#live-updated")).to_contain_text(re.compile(r"updated .* EST$"))
    assert draw(player.page) == "Ten points"  # seen without a click: the view refreshes itself
    expect(page.get_by_test_id("stat-draws").locator("strong")).to_have_text("2")
    expect(prize.locator('[data-col="left"]')).to_have_text("3")
    console.screenshot("console-live-desktop")

    page.locator("#tab-file").click()
    page.locator("#export").click()
    exported = page.locator("#campaign-text")
    expect(exported).to_have_value(re.compile(re.escape(f"- id: {ACTIVITY}\n  name: Launch\n")))
    assert "state: running" in exported.input_value()
    console.screenshot("console-file-desktop")
    exported.fill("awards:\n  - {id: 201, kind: thanks, title: Imported later}\n")
    page.locator("#import").click()
    expect(page.locator("#notice")).to_contain_text("Imported: 1 awards")
    page.locator("#tab-campaign").click()
    expect(page.locator("#f-awards-2-title")).to_have_value("Imported later")

    # Another operator closes the activity meanwhile: this page's Close is refused and shows
    # the state the activity is really in, with the step that applies now.
    with httpx.Client(base_url=blank_server.url) as other:
        credentials = {"name": operator, "password": PASSWORD}
        token = other.post("/api/auth/login", json=credentials).json()["token"]
        headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": str(uuid.uuid4())}
        assert other.post(f"/api/admin/activities/{ACTIVITY}/close", headers=headers).is_success
    page.get_by_test_id(f"act-{ACTIVITY}-close").click()
    expect(page.locator("#notice")).to_contain_text(f"activity {ACTIVITY} is closed now")
    expect(page.get_by_test_id(f"state-{ACTIVITY}")).to_have_text("closed")
    page.get_by_test_id(f"act-{ACTIVITY}-reopen").click()
    expect(page.get_by_test_id(f"state-{ACTIVITY}")).to_have_text("running")
    refused = [*PROVOKED, CONFLICT] + [CONFLICT] * started_by_scheduler
    assert sorted(console.errors) == sorted(refused), "only the refused requests log errors"
    assert player.errors == []

    phone = tab(blank_server.url + "/console", PHONE)
    log_in(phone, operator)
    expect(phone.page.get_by_test_id("stat-draws").locator("strong")).to_have_text("2")
    phone.screenshot("console-live-phone")
    phone.page.locator("#tab-campaign").click()
    expect(phone.page.get_by_test_id(f"state-{ACTIVITY}")).to_have_text("running")
    phone.screenshot("console-campaign-phone")
    width = phone.page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], "the console scrolls sideways on a phone"
    assert phone.errors == []

    phone.page.locator("#tab-live").click()
    token = phone.page.evaluate("localStorage.getItem('raffle.token')")
    ended = httpx.post(
        f"{blank_server.url}/api/auth/logout",
        headers={"Authorization": f"Bearer {token}", "Idempotency-Key": str(uuid.uuid4())},
    )
    assert ended.status_code == 204
    expect(phone.page.locator("#login-name")).to_be_visible()  # at the next refresh
    expect(phone.page.locator("#notice")).to_contain_text("Your session has expired")
    assert phone.errors, "the refused refresh is logged"
    assert set(phone.errors) == {EXPIRED}, "and nothing else"


def test_a_player_account_is_turned_away_from_the_console(
    blank_server: Server, tab: OpenTab
) -> None:
    credentials = {"name": "player2", "password": PASSWORD}
    assert httpx.post(f"{blank_server.url}/api/auth/register", json=credentials).status_code == 201
    console = tab(blank_server.url + "/console", PHONE)
    log_in(console, "player2")
    expect(console.page.locator("#refused")).to_contain_text(
        "Operators only: this account has no admin role."
    )
    expect(console.page.locator("#tab-campaign")).to_have_count(0)
    assert console.errors == []
