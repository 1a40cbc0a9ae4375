"""The draw rate limit as a player meets it: drawing again within the second (from another
tab) answers 429; the page says so in a sentence, holds the Draw button for the wait the
server gave, and draws again after it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from playwright.sync_api import expect

from tests.browser.conftest import PHONE, OpenTab, Server
from tests.browser.player import draw, register

DEMO = 100301
# Another tab's draw, then a click here: both well within one second.
DRAW_ELSEWHERE_THEN_HERE = """async (activity) => {
  const answer = await fetch(`/api/activities/${activity}/draws`, { method: "POST", headers: {
    Authorization: `Bearer ${localStorage.getItem("raffle.token")}`,
    "Idempotency-Key": crypto.randomUUID() } });
  document.querySelector("[data-testid=draw]").click();
  return answer.status;
}"""


def test_a_player_drawing_too_fast_is_told_to_wait(
    serve: Callable[..., Server], tab: OpenTab
) -> None:
    server = serve(demo=True, RAFFLE_DRAWS_PER_SECOND="1")
    opened = tab(server.url, PHONE)
    page = opened.page
    # The page's clock, a minute behind, so that it can be stopped at "now" below.
    page.clock.install(time=datetime.now(UTC) - timedelta(minutes=1))
    page.emulate_media(reduced_motion="reduce")
    register(page, "dora")
    board, button = page.get_by_test_id("board"), page.get_by_test_id("draw")
    expect(board).to_have_attribute("data-activity", str(DEMO))
    expect(button).to_be_enabled()

    # The page's second of waiting starts at the 429 and ends before the page has read the
    # board again, on a slow machine: stopped, it shows the wait however long that read takes.
    page.clock.pause_at(datetime.now(UTC))
    assert page.evaluate(DRAW_ELSEWHERE_THEN_HERE, DEMO) == 201
    expect(page.locator("#notice")).to_have_text("Too fast. Wait a moment and try again.")
    expect(board).to_have_attribute("data-state", "error")
    expect(button).to_be_disabled()  # for the second the server asked to wait
    expect(page.get_by_test_id("draw-reason")).to_have_text("Wait a second before drawing again.")
    opened.screenshot("rate-limited-phone")
    # Running again, the page's second ends a real second after the 429: the server's has too.
    page.clock.resume()
    expect(button).to_be_enabled(timeout=5_000)
    expect(page.get_by_test_id("draw-reason")).to_have_text("")
    assert draw(page)  # and the next draw goes through
    expect(board).to_have_attribute("data-draws", "1")
    statuses = [e.split("status of ")[-1][:3] for e in opened.errors]
    assert statuses == ["429"], opened.errors
