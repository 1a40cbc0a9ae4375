"""The operator console in a real browser: an activity made scheduled in the forms (its draw
time, winners per prize, a person's limit), saved, and exported with those fields; one also
marked queued refused at its checkbox."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, OpenTab, Server, Tab
from tests.browser.test_console import ACTIVITY, build_campaign, log_in


def _scheduled_campaign(server: Server, tab: OpenTab) -> tuple[Tab, datetime]:
    """The console, signed in, with a new campaign whose activity is drawn at a set time
    (5 winners a prize, two days after it begins); that draw time."""
    console = tab(server.url + "/console", DESKTOP)
    page = console.page
    log_in(console, server.operator())
    build_campaign(page)
    page.locator("#f-strategies-0-prizes-0-rate").fill("1")
    page.locator("#f-activities-0-kind").select_option("scheduled")
    begins = datetime.fromisoformat(page.locator("#f-activities-0-begin_at").input_value())
    draw_at = begins + timedelta(days=2)  # within the month a new activity runs
    page.locator("#f-activities-0-draw_at").fill(draw_at.isoformat())
    page.locator("#f-activities-0-winners_per_prize").fill("5")
    return console, draw_at


def test_an_operator_makes_an_activity_scheduled(blank_server: Server, tab: OpenTab) -> None:
    console, draw_at = _scheduled_campaign(blank_server, tab)
    page = console.page
    page.locator("#f-activities-0-one_person_lottery_number").fill("2")
    page.locator("#save").click()
    expect(page.locator("#notice")).to_contain_text("Saved")
    expect(page.locator(".field-error")).to_have_count(0)

    page.locator("#tab-file").click()
    page.locator("#export").click()
    exported = page.locator("#campaign-text")
    expect(exported).to_have_value(re.compile(rf"- id: {ACTIVITY}\n"))
    text = exported.input_value()
    assert "kind: scheduled" in text
    assert "winners_per_prize: 5" in text
    assert "one_person_lottery_number: 2" in text
    cutoff = re.search(r"cutoff: (\S+)", text)
    assert cutoff, text
    assert datetime.fromisoformat(cutoff[1]) == draw_at - timedelta(minutes=30)  # by default

    assert console.errors == []


def test_a_scheduled_activity_with_queued_draws_is_refused_at_the_checkbox(
    blank_server: Server, tab: OpenTab
) -> None:
    console, _ = _scheduled_campaign(blank_server, tab)
    page = console.page
    page.locator("#f-activities-0-queued").check()
    page.locator("#save").click()
    refused = page.locator('.field-error[data-for="activities.0.queued"]')
    expect(refused).to_contain_text("queued or scheduled, not both")
    expect(page.locator("#f-activities-0-queued")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#notice")).not_to_contain_text("Saved")

    page.locator("#f-activities-0-queued").uncheck()
    page.locator("#save").click()
    expect(page.locator("#notice")).to_contain_text("Saved")
    expect(page.locator(".field-error")).to_have_count(0)
