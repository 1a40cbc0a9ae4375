"""Buying content in a real browser: a player orders a piece of content, scans its QR code
(opens the Alipay simulator's pay page), pays there, and the page opens the body once the
notification has paid the order; an operator sees the order paid, its history, and the
reconciliation with the gateway clean."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from playwright.sync_api import expect

from tests.alipay_world import APP_ID, SELLER_ID, Sim, new_key, simulator
from tests.browser.conftest import DESKTOP, PHONE, OpenTab, Server
from tests.browser.player import operator_headers, post, register
from tests.browser.test_console import log_in
from tests.services import free_port


@pytest.fixture
def merchant() -> rsa.RSAPrivateKey:
    return new_key()


@pytest.fixture
def sim(tmp_path: Path, merchant: rsa.RSAPrivateKey) -> Iterator[Sim]:
    (folder := tmp_path / "alipay").mkdir()
    with simulator(folder, merchant) as running:
        yield running


def _shop(
    serve: Callable[..., Server], sim: Sim, merchant: rsa.RSAPrivateKey, folder: Path
) -> Server:
    """A server whose payment gateway is the simulator, notified at its own notify route."""
    key = folder / "merchant.key"
    key.write_bytes(
        merchant.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    (public := folder / "sim.pub").write_text(sim.public_key)
    port = free_port()
    return serve(
        RAFFLE_PORT=str(port),
        RAFFLE_ALIPAY_APP_ID=APP_ID,
        RAFFLE_ALIPAY_SELLER_ID=SELLER_ID,
        RAFFLE_ALIPAY_GATEWAY_URL=sim.gateway_url,
        RAFFLE_ALIPAY_NOTIFY_URL=f"http://127.0.0.1:{port}/api/payments/alipay/notify",
        RAFFLE_ALIPAY_APP_PRIVATE_KEY_FILE=str(key),
        RAFFLE_ALIPAY_PUBLIC_KEY_FILE=str(public),
    )


def test_a_player_buys_pays_on_the_simulator_and_reads(
    serve: Callable[..., Server],
    tab: OpenTab,
    sim: Sim,
    merchant: rsa.RSAPrivateKey,
    tmp_path: Path,
) -> None:
    server = _shop(serve, sim, merchant, tmp_path)
    admin = operator_headers(server)
    text = {
        "id": "course-1", "title": "Raffles, lesson one", "summary": "Odds and stock",
        "preview": "What a *strategy* is.", "body": "## Lesson one\n\nOdds are **exact**.",
        "price_cents": 990,
    }  # fmt: skip
    assert post(server, "/api/admin/content", admin, json=text).status_code == 200
    moved = post(server, "/api/admin/content/course-1/state", admin, json={"state": "on_sale"})
    assert moved.status_code == 200

    # The player opens the content, buys it, and is shown the QR code.
    player = tab(server.url + "/", PHONE)
    register(player.page, "buyer")
    card = player.page.locator('[data-testid=content-card][data-content="course-1"]')
    card.get_by_role("button", name="Open").click()
    expect(player.page.get_by_test_id("content-view")).to_have_attribute("data-held", "false")
    player.page.get_by_test_id("buy").click()
    checkout = player.page.get_by_test_id("checkout")
    expect(checkout).to_have_attribute("data-state", "paying")
    expect(player.page.get_by_test_id("qr").locator("svg")).to_be_visible()
    player.screenshot("player-checkout")

    # Scanning it opens the simulator's pay page; the buyer pays there.
    link = player.page.get_by_test_id("pay-link")
    with player.page.context.expect_page() as opened:
        link.click()
    pay_page = opened.value
    pay_page.locator("#pay").click()
    expect(pay_page.locator("body")).to_contain_text("支付成功 Paid")

    # The page follows the order until it is paid, then opens the body.
    body = player.page.get_by_test_id("content-body")
    expect(body.locator("strong")).to_have_text("exact", timeout=30_000)
    expect(player.page.get_by_test_id("content-view")).to_have_attribute("data-held", "true")
    mine = player.page.get_by_test_id("my-orders").locator("li")
    expect(mine).to_have_count(1)
    expect(mine.first).to_have_attribute("data-state", "paid")
    player.screenshot("player-paid")
    assert player.errors == []

    # The operator sees the order paid with its history, and the reconciliation clean.
    console = tab(server.url + "/console", DESKTOP)
    log_in(console, "operator")
    page = console.page
    page.get_by_role("tab", name="Payments").click()
    row = page.get_by_test_id("payment-orders").locator("tbody tr")
    expect(row).to_have_count(1)
    expect(row.first).to_have_attribute("data-state", "paid")
    row.first.get_by_role("button").click()
    history = page.get_by_test_id("order-history")
    expect(history).to_contain_text("paying → paid (paid)")
    page.get_by_test_id("reconcile").click()
    expect(page.get_by_test_id("reconciliation")).to_have_attribute("data-clean", "true")
    expect(page.get_by_test_id("no-failed-refunds")).to_be_visible()
    console.screenshot("console-payments")
    assert console.errors == []
