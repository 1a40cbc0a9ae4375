"""A scheduled draw in a real browser: the demo activity made scheduled a few seconds ahead,
a player enters, the entries close and the list's hash is published, the server's own worker
draws, and the page shows the player's win with the link to verify it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from playwright.sync_api import expect

from tests.browser import player
from tests.browser.conftest import DESKTOP, OpenTab, Server

ACTIVITY = 100302
DEMO = Path(__file__).parents[2] / "examples" / "big-market.yaml"
# A player's entrance read before they entered: 404 `not_entered`, which the browser logs.
NOT_ENTERED = "Failed to load resource: the server responded with a status of 404 (Not Found)"
STRATEGIES = "strategies:\n"
ACTIVITIES = "activities:\n"


def _scheduled(cutoff: datetime, draw_at: datetime) -> str:
    """The demo campaign and a scheduled activity beside it (a running one's schedule is
    fixed): one prize, one winner a prize, so its only entrant wins the lamp."""
    strategy = (
        "  - id: 100007\n"
        "    description: the lamp, at a set time\n"
        '    fallback: {award: 101, points: "1,100"}\n'
        "    prizes:\n"
        "      - {award: 105, rate: 1, stock: 10}\n"
    )
    activity = (
        f"  - id: {ACTIVITY}\n"
        "    name: Lamp draw\n"
        "    description: A scheduled draw\n"
        "    strategy: 100007\n"
        f"    begin_at: {(cutoff - timedelta(hours=1)).isoformat()}\n"
        "    end_at: 2030-01-01T00:00:00+08:00\n"
        "    state: running\n"
        "    kind: scheduled\n"
        f"    cutoff: {cutoff.isoformat()}\n"
        f"    draw_at: {draw_at.isoformat()}\n"
        "    winners_per_prize: 1\n"
    )
    text = DEMO.read_text().replace(STRATEGIES, STRATEGIES + strategy)
    return text.replace(ACTIVITIES, ACTIVITIES + activity)


def test_players_enter_a_scheduled_draw_and_see_its_outcome(
    demo_server: Server, tab: OpenTab
) -> None:
    headers = player.operator_headers(demo_server)
    cutoff = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=20)
    text = _scheduled(cutoff, cutoff + timedelta(seconds=5))
    loaded = player.load_campaign(demo_server, headers, text)
    assert loaded.status_code == 200, loaded.text

    tabs = {name: tab(demo_server.url + "/", DESKTOP) for name in ("ann", "bob", "late")}
    for name, opened in tabs.items():
        page = opened.page
        player.register(page, name)
        player.choose_activity(page, ACTIVITY)
        card = page.get_by_test_id("scheduled")
        expect(card).to_have_attribute("data-stage", "open")
        expect(page.get_by_test_id("countdown")).to_contain_text("Entries close in")
        expect(page.get_by_test_id("draw")).to_be_disabled()  # entries, not draws
        if name == "late":
            continue
        page.get_by_test_id("enter").click()
        expect(card).to_have_attribute("data-entered", "yes")
        expect(page.get_by_test_id("entered")).to_be_visible()

    # Past the cutoff the list is frozen and its hash published; then the server's worker draws.
    ann = tabs["ann"].page
    expect(ann.get_by_test_id("scheduled")).to_have_attribute(
        "data-stage", "frozen", timeout=40_000
    )
    record = httpx.get(f"{demo_server.url}/api/activities/{ACTIVITY}/scheduled-draw").json()
    entrants = ann.get_by_test_id("entrants")
    expect(entrants).to_have_attribute("data-hash", record["entrants_hash"])
    expect(entrants).to_contain_text("2 entrants")
    expect(tabs["late"].page.get_by_test_id("entries-closed")).to_be_visible()

    outcomes = []
    for opened in tabs.values():
        page = opened.page
        card = page.get_by_test_id("scheduled")
        expect(card).to_have_attribute("data-stage", "drawn", timeout=30_000)
        expect(page.get_by_test_id("verify-draw")).to_have_attribute(
            "href", f"/api/activities/{ACTIVITY}/scheduled-draw"
        )
        if card.get_attribute("data-entered") == "yes":
            outcomes.append(page.get_by_test_id("outcome").inner_text())
            won = page.get_by_test_id("outcome").get_attribute("data-won") == "105"
            # The page reads the player's prizes again once it saw the draw.
            expect(page.get_by_test_id("my-prize")).to_have_count(1 if won else 0)
        else:
            expect(page.get_by_test_id("outcome")).to_have_count(0)
        assert set(opened.errors) <= {NOT_ENTERED}
    # One winner for the one prize: one of the two entrants won the lamp.
    assert sorted(outcomes) == ["Not this time.", "You won: 小米台灯"]
    tabs["ann"].screenshot("scheduled-draw-drawn")
    drawn = httpx.get(f"{demo_server.url}/api/activities/{ACTIVITY}/scheduled-draw").json()
    assert drawn["seed"] is not None  # revealed: what raffle verify-draw checks against
