"""Paid content in a real browser: an operator writes it in the console (its Markdown
previewed as players will see it) and puts it on sale; a player who won it in a draw reads
the body; one without it sees the free preview and the price, and no body."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE, OpenTab, Server
from tests.browser.player import choose_activity, draw, load_campaign, operator_headers, register
from tests.browser.test_console import log_in

ACTIVITY = 100001
# The first draw wins the content (certain, stock 1); every later one the fallback.
CAMPAIGN = f"""awards:
  - {{id: 101, kind: thanks, title: Thanks for playing}}
  - {{id: 102, kind: content, title: A course, config: course-1}}
packs:
  - {{id: 11, total: 5, day: 5, month: 5}}
strategies:
  - {{id: 1001, fallback: {{award: 101}}, prizes: [{{award: 102, rate: 1, stock: 1}}]}}
activities:
  - {{id: {ACTIVITY}, name: Content prize, strategy: 1001, state: running, welcome_pack: 11,
     begin_at: 2026-01-01T00:00:00+08:00, end_at: 2030-01-01T00:00:00+08:00}}
"""
BODY = "## Lesson one\n\nOdds are **exact**.<script>document.title='owned'</script>"


def test_a_holder_reads_the_body_and_others_see_the_preview_and_price(
    serve: Callable[..., Server], tab: OpenTab
) -> None:
    server = serve()
    admin = operator_headers(server)
    assert load_campaign(server, admin, CAMPAIGN).status_code == 200

    # The operator writes the content in the console and puts it on sale.
    console = tab(server.url + "/console", DESKTOP)
    log_in(console, "operator")
    page = console.page
    page.get_by_role("tab", name="Content").click()
    expect(page.get_by_test_id("no-content")).to_be_visible()
    page.get_by_role("button", name="New content").click()
    page.get_by_label("Id").fill("course-1")
    page.get_by_label("Title").fill("Raffles, lesson one")
    page.get_by_label("Summary").fill("Prizes, odds and stock")
    page.get_by_label("Price (¥)").fill("9.90")
    page.get_by_label("Free preview").fill("What a *strategy* is made of.")
    page.get_by_label("Body", exact=True).fill(BODY)
    page.get_by_role("button", name="Preview body").click()
    shown = page.get_by_test_id("body-preview")
    expect(shown.locator("strong")).to_have_text("exact")
    expect(shown.locator("script")).to_have_count(0)
    page.get_by_role("button", name="Save").click()
    row = page.locator('[data-content="course-1"]')
    expect(row.get_by_test_id("state")).to_have_text("draft")
    row.get_by_test_id("to-on_sale").click()
    expect(row.get_by_test_id("state")).to_have_text("on_sale")
    expect(page.get_by_role("heading", name="Edit course-1 (on_sale)")).to_be_visible()
    expect(page.get_by_test_id("body-preview").locator("strong")).to_have_text("exact")
    console.screenshot("console-content")

    # A player wins it in a draw; once delivered, the shelf opens its body.
    winner = tab(server.url + "/", PHONE)
    register(winner.page, "winner")
    choose_activity(winner.page, ACTIVITY)
    assert draw(winner.page) == "A course"
    prize = winner.page.get_by_test_id("my-prize").first
    expect(prize).to_have_attribute("data-state", "completed", timeout=20_000)
    winner.page.reload()
    expect(winner.page.get_by_test_id("my-content")).to_have_text("Raffles, lesson oneOpen")
    winner.page.locator('[data-testid=content-card][data-content="course-1"]').get_by_role(
        "button", name="Open"
    ).click()
    view = winner.page.get_by_test_id("content-view")
    expect(view).to_have_attribute("data-held", "true")
    body = winner.page.get_by_test_id("content-body")
    expect(body.locator("h2")).to_have_text("Lesson one")
    expect(body.locator("strong")).to_have_text("exact")
    expect(body.locator("script")).to_have_count(0)
    expect(winner.page.get_by_test_id("content-price")).to_have_count(0)
    assert winner.page.title() != "owned"
    winner.screenshot("player-content-held")

    # Another player sees the preview and the price, and no body.
    other = tab(server.url + "/", PHONE)
    register(other.page, "browser")
    card = other.page.locator('[data-testid=content-card][data-content="course-1"]')
    expect(card).to_contain_text("Prizes, odds and stock")
    card.get_by_role("button", name="Open").click()
    view = other.page.get_by_test_id("content-view")
    expect(view).to_have_attribute("data-held", "false")
    expect(other.page.get_by_test_id("content-preview").locator("em")).to_have_text("strategy")
    expect(other.page.get_by_test_id("content-price")).to_have_text("CN¥9.90")
    expect(other.page.get_by_test_id("content-body")).to_have_count(0)
    expect(view).not_to_contain_text("exact")
    expect(other.page.get_by_test_id("buy")).to_have_count(0)  # no payment orders yet
    other.screenshot("player-content-preview")

    assert console.errors == []
    assert winner.errors == []
    assert other.errors == []
