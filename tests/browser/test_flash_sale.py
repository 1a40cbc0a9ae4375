"""A flash sale in a real browser (/flash#ID): the countdown from the server's clock reaches
zero, the player's page answers the challenge, buys, shows "queued" then the order; a second
player finds it sold out. The console's Flash sales tab shows the sale's books."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from playwright.sync_api import Response, expect

from tests.browser import player
from tests.browser.conftest import DESKTOP, PASSWORD, OpenTab, Server

SALE = 1111


def test_a_countdown_then_one_unit_bought_and_the_next_player_told_sold_out(
    serve: Callable[..., Server], tab: OpenTab
) -> None:
    server = serve(RAFFLE_FLASH_DIFFICULTY="8")
    headers = player.operator_headers(server)
    starts = datetime.now(UTC) + timedelta(seconds=6)
    sale = {
        "id": SALE, "name": "限量保温杯", "price": 0, "currency": "cents", "stock": 1,
        "starts_at": starts.isoformat(), "ends_at": (starts + timedelta(hours=1)).isoformat(),
    }  # fmt: skip
    made = player.post(server, "/api/admin/flash-sales", headers, json=sale)
    assert made.status_code == 201, made.text

    first = tab(server.url + "/", DESKTOP)
    player.register(first.page, "quick")
    said: list[str] = []

    def seen(response: Response) -> None:
        if response.url.endswith("/purchase"):
            said.append(response.json()["status"])

    first.page.on("response", seen)
    first.page.goto(f"{server.url}/flash#{SALE}")
    countdown, buy = (
        first.page.get_by_test_id("flash-countdown"),
        first.page.get_by_test_id("flash-buy"),
    )
    expect(countdown).not_to_have_attribute("data-left", "0")
    expect(buy).to_be_disabled()
    expect(countdown).to_have_attribute("data-left", "0", timeout=20_000)
    buy.click()
    expect(first.page.get_by_test_id("flash-status")).to_have_attribute("data-state", "ordered")
    expect(first.page.get_by_test_id("flash-order")).to_have_text(f"fs{SALE}-quick-1")
    assert said == ["queued"]

    second = tab(server.url + "/", DESKTOP)
    player.register(second.page, "late")
    second.page.goto(f"{server.url}/flash#{SALE}")
    second.page.get_by_test_id("flash-buy").click()
    expect(second.page.get_by_test_id("flash-status")).to_have_attribute("data-state", "sold_out")

    console = tab(server.url + "/console", DESKTOP)
    console.page.locator("#login-name").fill("operator")
    console.page.locator("#login-password").fill(PASSWORD)
    console.page.locator("#login").click()
    console.page.locator("#tab-flash").click()
    row = console.page.locator(f"#flash-sales tr[data-sale='{SALE}']")
    expect(row.locator("td[data-state=done]")).to_have_text("1")
    expect(row.locator("td[data-left]")).to_have_text("0")
    first.screenshot("flash-sale-ordered")
    assert first.errors == second.errors == console.errors == []
