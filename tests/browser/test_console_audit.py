"""The console's Audit tab on the embedded default: an operator locks a player, the
configuration chain's head moves on and is shown as the API and `raffle audit heads` give it;
`raffle audit verify` says it holds, and after a row is altered by hand, names it."""

from __future__ import annotations

import sqlite3
import subprocess

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PASSWORD, RAFFLE, OpenTab, Server
from tests.browser.player import operator_headers, post


def test_the_console_shows_each_chain_head_and_verify_names_an_altered_row(
    blank_server: Server, tab: OpenTab
) -> None:
    server = blank_server
    admin = operator_headers(server)
    server.raffle("user", "create", "alice", "--password", PASSWORD)
    locked = post(server, "/api/admin/users/alice/lock", admin, json={"reason": "chargebacks"})
    assert locked.status_code == 200, locked.text
    heads = httpx.get(f"{server.url}/api/admin/audit/heads", headers=admin).json()
    config = heads[0]
    assert (config["chain"], config["seq"]) == ("config", 1)

    console = tab(server.url + "/console", DESKTOP)
    page = console.page
    page.locator("#login-name").fill("operator")
    page.locator("#login-password").fill(PASSWORD)
    page.locator("#login").click()
    page.locator("#tab-audit").click()
    row = page.locator('#audit-heads tr[data-chain="config"]')
    expect(row).to_contain_text(config["hash"])
    expect(row.locator("td.num")).to_have_text("1")
    expect(page.locator("#audit-heads tbody tr")).to_have_count(len(heads))
    console.screenshot("console-audit-desktop")
    assert console.errors == []

    assert f"config #1 {config['hash']}" in server.raffle("audit", "heads")
    assert f"config #1 {config['hash']}: ok" in server.raffle("audit", "verify")
    with sqlite3.connect(server.folder / "raffle.db", timeout=30) as db:
        db.execute("UPDATE audit_entry SET actor = 'someone else' WHERE seq = 1")
    done = subprocess.run(
        [str(RAFFLE), "audit", "verify"], env=server.env, cwd=server.folder,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "config: BROKEN at #1: " in done.stdout
    assert "altered" in done.stdout
