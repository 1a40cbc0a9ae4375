"""A player draws, opens the draw's receipt on the verify page: it waits while the seed is
secret, and says it matches once an operator's rotation has revealed it; a receipt with a
field changed is named, in English and in Chinese. A win shows on the ticker and its receipt
matches after the reveal."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, OpenTab, Server
from tests.browser.player import choose_activity, draw, operator_headers, post, register
from tests.browser.test_winners_feed import load_capped

DEMO = 100301


def test_a_drawn_receipt_matches_after_the_reveal(demo_server: Server, tab: OpenTab) -> None:
    opened = tab(demo_server.url, DESKTOP)
    page = opened.page
    register(page, "vera")
    expect(page.get_by_test_id("board")).to_have_attribute("data-activity", str(DEMO))
    draw(page)
    link = page.get_by_test_id("receipt-link")
    expect(link).to_have_text("Receipt of this draw")
    link.click()
    verdict = page.get_by_test_id("verdict")
    expect(verdict).to_have_attribute("data-verdict", "secret")
    receipt = json.loads(page.get_by_test_id("receipt").input_value())
    assert receipt["activity_id"] == DEMO
    opened.screenshot("verify-secret")

    operator = operator_headers(demo_server)
    rotated = post(demo_server, f"/api/admin/activities/{DEMO}/fairness/rotate", operator)
    assert rotated.status_code == 200, rotated.text
    expect(verdict).to_have_attribute("data-verdict", "matches")  # the page asks again
    expect(verdict).to_have_text(
        "Matches: this outcome follows from the revealed seed and the published odds."
    )
    opened.screenshot("verify-matches")

    changed = {**receipt, "nonce": receipt["nonce"] + 1}
    page.get_by_test_id("receipt").fill(json.dumps(changed))
    page.get_by_test_id("check").click()
    expect(verdict).to_have_attribute("data-verdict", "differs")
    expect(verdict).to_have_text("Does not match; what differs: nonce.")
    assert opened.errors == []


def test_the_verify_page_speaks_chinese(demo_server: Server, tab: OpenTab) -> None:
    opened = tab(demo_server.url + "/verify", DESKTOP)
    page = opened.page
    page.evaluate("localStorage.setItem('raffle.language', 'zh')")
    page.reload()
    expect(page.get_by_test_id("check")).to_have_text("核验")
    page.get_by_test_id("receipt").fill("{")
    page.get_by_test_id("check").click()
    expect(page.get_by_test_id("verdict")).to_have_text("这不是凭证：无法按 JSON 读取。")
    assert opened.errors == []


def test_a_win_on_the_ticker_matches_after_the_reveal(blank_server: Server, tab: OpenTab) -> None:
    load_capped(blank_server, "ticker")  # examples/capped.yaml: every draw wins, a ticker
    opened = tab(blank_server.url, DESKTOP)
    page = opened.page
    register(page, "winnie")
    choose_activity(page, 1)
    title = draw(page)
    shown = page.get_by_test_id("winner")
    expect(shown).to_have_count(1)
    expect(shown).to_contain_text(f"w***e won {title}")
    page.get_by_test_id("receipt-link").click()
    verdict = page.get_by_test_id("verdict")
    expect(verdict).to_have_attribute("data-verdict", "secret")
    receipt = json.loads(page.get_by_test_id("receipt").input_value())
    assert (receipt["activity_id"], receipt["nonce"]) == (1, 1)

    rotated = post(
        blank_server, "/api/admin/activities/1/fairness/rotate", operator_headers(blank_server)
    )
    assert rotated.status_code == 200, rotated.text
    expect(verdict).to_have_attribute("data-verdict", "matches")
    assert json.loads(page.get_by_test_id("receipt").input_value()) == receipt
    opened.screenshot("verify-ticker-win-matches")
    assert opened.errors == []
