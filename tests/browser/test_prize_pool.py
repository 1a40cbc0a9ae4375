"""The prize pool in a real browser, one flow: an operator uploads a prize's image in the
console; the player's board shows each prize's image and level (in the cell the campaign
names), a win its win tips and my prizes its image and level; players draw until the prize's
stock falls to its warning threshold, and the operator's live view shows the badge."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

from PIL import Image
from playwright.sync_api import Page, expect

from raffle.adapters.prize_images import prepare
from tests.browser.conftest import DESKTOP, PHONE, OpenTab, Server, Tab
from tests.browser.player import (
    choose_activity,
    draw,
    load_campaign,
    operator_headers,
    post,
    register,
)
from tests.browser.test_console import log_in

ACTIVITY = 500001
LEVELS = {501: "一等奖", 502: "二等奖", 503: "三等奖"}
STOCK, WARNING = 5, 2  # of the prize every draw wins: warned when 2 are left, after 3 draws


def _png(colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (120, 120), colour).save(out, "PNG")
    return out.getvalue()


def _campaign(image_id: str) -> str:
    prizes = [
        f"{{award: 501, rate: 0, stock: 3, level: 1, level_name: 一等奖, image: {image_id}}}",
        "{award: 502, rate: 0, stock: 30, level: 2, level_name: 二等奖, cell: 5}",
        # every draw wins it: my prizes show what was won, and its stock falls
        f"{{award: 503, rate: 1, stock: {STOCK}, warning_surplus: {WARNING}, level: 3,"
        f" level_name: 三等奖, image: {image_id}, win_tips: 积分已存入账户}}",
    ]
    return "\n".join(
        [
            "awards:",
            "  - {id: 501, kind: physical, title: 金奖杯}",
            "  - {id: 502, kind: physical, title: 银奖杯}",
            "  - {id: 503, kind: points, title: 十积分, config: '10'}",
            "  - {id: 599, kind: thanks, title: 谢谢参与}",
            "packs:",
            "  - {id: 51, total: 20, day: 20, month: 20}",
            "strategies:",
            f"  - {{id: {ACTIVITY}, fallback: 599, prizes: [{', '.join(prizes)}]}}",
            "activities:",
            f"  - {{id: {ACTIVITY}, name: 奖品池, strategy: {ACTIVITY}, state: running,"
            " welcome_pack: 51, begin_at: 2026-01-01T00:00:00+08:00,"
            " end_at: 2030-01-01T00:00:00+08:00}",
        ]
    )


def _shown_images(page: Page) -> dict[str, str]:
    """Each board cell's award and the image it shows, read once every image has loaded."""
    images = page.locator("[data-testid=cell] [data-testid=prize-image]")
    for i in range(images.count()):
        expect(images.nth(i)).to_have_js_property("complete", True)
        assert images.nth(i).evaluate("(img) => img.naturalWidth") == 120  # drawn, not broken
    return dict(
        page.evaluate(
            """() => [...document.querySelectorAll("[data-testid=cell]")]
              .filter((cell) => cell.querySelector("[data-testid=prize-image]"))
              .map((cell) => [cell.dataset.award,
                              cell.querySelector("[data-testid=prize-image]").getAttribute("src")])"""
        )
    )


def test_an_upload_reaches_the_board_with_levels_and_stock_falling_shows_the_badge(
    serve: Callable[..., Server], tab: OpenTab, tmp_path: Path
) -> None:
    server = serve()
    operator = operator_headers(server)
    uploaded = post(
        server, "/api/admin/prize-images", operator, files={"file": ("a.png", _png((220, 40, 40)))}
    )
    assert uploaded.status_code == 200, uploaded.text
    first = uploaded.json()["id"]
    answer = load_campaign(server, operator, _campaign(first))
    assert answer.status_code == 200, answer.text

    # The operator uploads the silver cup's picture in the console and saves.
    console = tab(server.url + "/console", DESKTOP)
    log_in(console, "operator")
    picture = tmp_path / "silver.jpg"
    picture.write_bytes(_png((160, 160, 170)))  # named .jpg, a PNG inside: read by content
    # A running activity opens the live view once the console has loaded: clicked before,
    # the campaign tab would be left for it.
    expect(console.page.locator("#tab-live")).to_have_attribute("aria-selected", "true")
    console.page.locator("#tab-campaign").click()
    threshold = console.page.locator("[name='strategies.0.prizes.2.warning_surplus']")
    expect(threshold).to_have_value(str(WARNING))
    upload = console.page.get_by_test_id("prize-upload")
    expect(upload).to_have_count(3)
    upload.nth(1).set_input_files(picture)
    expect(console.page.get_by_test_id("prize-thumb")).to_have_count(3)
    console.page.locator("#save").click()
    expect(console.page.locator("#notice")).to_contain_text("Saved")
    console.screenshot("prize-pool-console")

    # The player's board shows every prize's image, the upload among them, and its level.
    player = tab(server.url, PHONE)
    register(player.page, "prize-watcher")
    choose_activity(player.page, ACTIVITY)
    expect(player.page.get_by_test_id("board")).to_have_attribute("data-layout", "grid")
    levels = player.page.locator("[data-testid=cell] [data-testid=level]")
    expect(levels).to_have_count(3)
    assert sorted(levels.all_inner_texts()) == sorted(LEVELS.values())
    silver = player.page.locator("[data-testid=cell][data-award='502']")
    expect(silver).to_have_css("grid-row", "3")  # cell 5: the bottom right, as the file says
    expect(silver).to_have_css("grid-column", "3")
    expect(silver.get_by_test_id("level")).to_have_text("二等奖")
    silver_id = prepare(picture.read_bytes()).id  # named by the hash of the bytes stored
    assert _shown_images(player.page) == {
        "501": f"/api/prize-images/{first}",
        "502": f"/api/prize-images/{silver_id}",
        "503": f"/api/prize-images/{first}",
    }
    player.screenshot("prize-pool-board")

    # Players draw; the live view shows no badge until the stock falls to the threshold.
    assert draw(player.page) == "十积分"
    expect(player.page.locator("#notice")).to_contain_text("积分已存入账户")  # its win tips
    won = player.page.get_by_test_id("my-prize")
    expect(won).to_have_count(1)
    expect(won.get_by_test_id("level")).to_have_text("三等奖")
    expect(won.get_by_test_id("prize-image")).to_have_attribute("src", f"/api/prize-images/{first}")
    console.page.locator("#tab-live").click()
    console.page.locator("#live-activity").select_option(str(ACTIVITY))
    row = console.page.get_by_test_id("prize-table").locator("tr[data-award='503']")
    expect(row.locator("[data-col=stock]")).to_have_text(str(STOCK))
    expect(row.locator("[data-col=left]")).to_have_text(str(STOCK - 1))
    expect(row.get_by_test_id("stock-warning")).to_have_count(0)
    expect(console.page.get_by_test_id("activity-stock-warning")).to_have_count(0)

    other = tab(server.url, PHONE)
    register(other.page, "second-player")
    choose_activity(other.page, ACTIVITY)
    for _ in range(STOCK - WARNING - 1):  # 4 left -> 2: the threshold
        assert draw(other.page) == "十积分"

    # The live view reads again every 3 s by itself.
    expect(row.locator("[data-col=left]")).to_have_text(str(WARNING))
    expect(row.get_by_test_id("stock-warning")).to_have_text(f"low stock: {WARNING} left")
    badge = console.page.get_by_test_id("activity-stock-warning")
    expect(badge).to_contain_text("Low stock")
    expect(badge).to_contain_text(f"十积分 ({WARNING} left")
    console.screenshot("prize-pool-stock-warning")
    _no_errors(player, other, console)


def _no_errors(*tabs: Tab) -> None:
    for opened in tabs:
        assert opened.errors == []
