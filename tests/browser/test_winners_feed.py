"""The winners' feed on the player page: a player wins, and the ticker shows the win with
the winner's name masked, on their page and on another player's."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from tests.browser.conftest import OpenTab, Server
from tests.browser.player import choose_activity, draw, register
from tests.browser.test_console import log_in

CAPPED = Path(__file__).parents[2] / "examples" / "capped.yaml"  # every draw wins; a ticker


def load_capped(server: Server, display: str) -> None:
    """examples/capped.yaml loaded through the command line, running, its feed `display`."""
    text = CAPPED.read_text(encoding="utf-8")
    path = server.folder / "capped.yaml"
    running = text.replace("    welcome_pack: 1\n", "    state: running\n    welcome_pack: 1\n")
    path.write_text(running.replace("show_winning_list: ticker", f"show_winning_list: {display}"))
    server.raffle("load", str(path))


def test_a_win_shows_on_the_ticker_masked(blank_server: Server, tab: OpenTab) -> None:
    load_capped(blank_server, "ticker")
    other = tab(blank_server.url)
    register(other.page, "bystander")
    choose_activity(other.page, 1)
    feed = other.page.get_by_test_id("winners")
    expect(feed).to_have_attribute("data-display", "ticker")
    expect(feed).to_contain_text("No winners yet")

    winner = tab(blank_server.url)
    register(winner.page, "winnie")
    choose_activity(winner.page, 1)
    title = draw(winner.page)
    for page in (winner.page, other.page):
        shown = page.get_by_test_id("winner")
        expect(shown).to_have_count(1)
        expect(shown).to_have_attribute("data-winner", "w***e")
        expect(shown).to_contain_text(f"w***e won {title}")
    assert "winnie" not in other.page.get_by_test_id("winners").inner_text()
    other.screenshot("player-winners-ticker")
    assert winner.errors == []
    assert other.errors == []


def test_a_hidden_feed_is_not_on_the_page_and_tiles_show_every_win(
    blank_server: Server, tab: OpenTab
) -> None:
    load_capped(blank_server, "hidden")
    player = tab(blank_server.url)
    register(player.page, "tilda")
    choose_activity(player.page, 1)
    draw(player.page)
    expect(player.page.get_by_test_id("winners")).to_have_count(0)

    load_capped(blank_server, "tiled")
    player.page.reload()
    choose_activity(player.page, 1)
    draw(player.page)
    feed = player.page.get_by_test_id("winners")
    expect(feed).to_have_attribute("data-display", "tiled")
    expect(player.page.get_by_test_id("winner")).to_have_count(2)
    expect(player.page.get_by_test_id("winner").first).to_be_visible()
    expect(player.page.get_by_test_id("winner").last).to_be_visible()
    assert player.errors == []


def test_an_operator_shows_the_feed_from_the_console(blank_server: Server, tab: OpenTab) -> None:
    load_capped(blank_server, "hidden")
    console = tab(blank_server.url + "/console")
    log_in(console, blank_server.operator())
    console.page.get_by_role("tab", name="Campaign").click()
    shown = console.page.locator("#f-activities-0-show_winning_list")
    expect(shown).to_have_value("hidden")
    shown.select_option("ticker")
    console.page.locator("#save").click()
    expect(console.page.locator("#notice")).to_contain_text("Saved")

    player = tab(blank_server.url)
    register(player.page, "otto")
    choose_activity(player.page, 1)
    draw(player.page)
    expect(player.page.get_by_test_id("winners")).to_have_attribute("data-display", "ticker")
    expect(player.page.get_by_test_id("winner")).to_have_attribute("data-winner", "o***o")
    assert console.errors == []
    assert player.errors == []
