"""Queued draws in a real browser: the demo activity switched to queued mode, a player's draw
is accepted with a ticket, polled (its place in the queue shown meanwhile), and shown as any
draw, receipt link included."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Response, expect

from tests.browser import player
from tests.browser.conftest import DESKTOP, OpenTab, Server
from tests.raffle_process import RAFFLE

ACTIVITY = 100301
DEMO = Path(__file__).parents[2] / "examples" / "big-market.yaml"
WELCOME = "    welcome_pack: 11              # granted on a user's first visit\n"


def test_a_player_draws_in_a_queued_activity_as_in_any_other(
    demo_server: Server, tab: OpenTab
) -> None:
    headers = player.operator_headers(demo_server)
    text = DEMO.read_text().replace(WELCOME, WELCOME + "    queued: true\n")
    assert player.load_campaign(demo_server, headers, text).status_code == 200

    page = tab(demo_server.url + "/", DESKTOP)
    player.register(page.page, "patient")
    player.choose_activity(page.page, ACTIVITY)
    answers: list[tuple[str, str, int]] = []

    def seen(response: Response) -> None:
        if response.url.endswith("/draws") or "/tickets/" in response.url:
            kind = "ticket" if "/tickets/" in response.url else "draw"
            answers.append((response.request.method, kind, response.status))

    page.page.on("response", seen)
    assert player.draw(page.page)
    expect(page.page.locator("#receipt-link")).to_be_visible()
    assert ("POST", "draw", 202) in answers  # a ticket, not the draw
    assert ("GET", "ticket", 200) in answers  # then the draw's answer, polled
    assert page.errors == []


def test_a_queued_draw_shows_its_place_until_a_worker_draws_it(
    serve: Callable[..., Server], rabbitmq_url: str, tab: OpenTab
) -> None:
    # On RabbitMQ `raffle serve` takes tickets but does not draw them: `raffle worker` does.
    server = serve(demo=True, RAFFLE_BROKER_URL=rabbitmq_url)
    headers = player.operator_headers(server)
    text = DEMO.read_text().replace(WELCOME, WELCOME + "    queued: true\n")
    assert player.load_campaign(server, headers, text).status_code == 200

    opened = tab(server.url + "/", DESKTOP)
    page = opened.page
    player.register(page, "waiting")
    player.choose_activity(page, ACTIVITY)
    page.get_by_test_id("draw").click()
    expect(page.get_by_test_id("draw-reason")).to_have_text("Queued: your draw is next.")
    expect(page.get_by_test_id("board")).to_have_attribute("data-draws", "0")

    worker = subprocess.Popen([str(RAFFLE), "worker"], env=server.env, cwd=server.folder)
    try:
        expect(page.get_by_test_id("board")).to_have_attribute("data-draws", "1")
        expect(page.get_by_test_id("board")).to_have_attribute("data-state", "done")
        expect(page.get_by_test_id("draw-reason")).not_to_contain_text("Queued")
        assert opened.errors == []
    finally:
        worker.terminate()
        worker.wait(timeout=30)
