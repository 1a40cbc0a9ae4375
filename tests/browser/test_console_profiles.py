"""The console's Profiles tab in a real browser: an operator imports a CSV of profiles with a
bad row (reported by its line), finds one by phone, edits it, and locks and unlocks the
player's account; the player sees their profile with the phone masked."""

from __future__ import annotations

from pathlib import Path

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PASSWORD, OpenTab, Server
from tests.browser.test_console import log_in


def test_an_operator_imports_finds_edits_and_locks_a_profile(
    demo_server: Server, tab: OpenTab, tmp_path: Path
) -> None:
    operator = demo_server.operator()
    credentials = {"name": "pia", "password": PASSWORD}
    assert httpx.post(f"{demo_server.url}/api/auth/register", json=credentials).is_success
    rows = [f"crm{n:03d},1380000{n:04d},{n % 5},浙江" for n in range(200)]
    rows += ["pia,139 0013 9000,2,上海", "bad one,1,1,x"]
    file = tmp_path / "crm.csv"
    file.write_text("user_id,phone,level,region\n" + "\n".join(rows) + "\n", encoding="utf-8")

    console = tab(demo_server.url + "/console", DESKTOP)
    log_in(console, operator)
    console.page.get_by_role("tab", name="Profiles").click()
    console.page.get_by_test_id("profile-file").set_input_files(str(file))
    console.page.get_by_role("button", name="Import", exact=True).click()
    summary = console.page.get_by_test_id("import-summary")
    expect(summary).to_have_text("202 rows: 201 created, 0 updated, 0 unchanged, 1 refused.")
    expect(console.page.get_by_test_id("import-report")).to_contain_text("line 203")

    search = console.page.get_by_test_id("profile-search")
    search.get_by_label("Phone").fill("13900139000")
    search.get_by_role("button", name="Search").click()
    found = console.page.get_by_test_id("profile-rows").locator("tr")
    expect(found).to_have_count(1)
    expect(found.first).to_contain_text("+8613900139000")
    expect(found.first.get_by_test_id("status")).to_have_text("active")
    found.first.get_by_test_id("open").click()
    detail = console.page.get_by_test_id("profile-detail")
    detail.locator('input[name="region"]').fill("北京")
    detail.get_by_test_id("save-profile").click()
    expect(found.first).to_contain_text("北京")

    detail.get_by_test_id("lock-reason").fill("chargebacks")
    detail.get_by_test_id("lock").click()
    expect(found.first.get_by_test_id("status")).to_have_text("locked")
    expect(detail.get_by_test_id("lock-history")).to_contain_text("locked by operator")
    expect(detail.get_by_test_id("lock-history")).to_contain_text("chargebacks")
    login = httpx.post(f"{demo_server.url}/api/auth/login", json=credentials)
    assert (login.status_code, login.json()["code"]) == (403, "account_locked")
    console.screenshot("console-profiles")
    detail.get_by_test_id("unlock").click()
    expect(found.first.get_by_test_id("status")).to_have_text("active")

    token = httpx.post(f"{demo_server.url}/api/auth/login", json=credentials).json()["token"]
    mine = httpx.get(
        f"{demo_server.url}/api/me/profile", headers={"Authorization": f"Bearer {token}"}
    ).json()
    assert (mine["phone"], mine["region"], mine["level"]) == ("+86 139****9000", "北京", 2)
    assert console.errors == []
