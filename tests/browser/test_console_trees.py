"""The console's Trees tab in a real browser: an operator's tree is drawn as they type it, a
bad one is refused with each problem's reason listed, a good one is saved, and a player is
routed by it."""

from __future__ import annotations

import json

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PASSWORD, OpenTab, Server
from tests.browser.test_console import log_in

ACTIVITY = 100301
REFUSED = (
    "Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)"
)
GOOD = {
    "root": "by_age",
    "nodes": [
        {
            "id": "by_age",
            "field": "age",
            "lines": [
                {"op": "<", "value": 18, "to": "minors"},
                {"op": "default", "to": "by_tag"},
            ],
        },
        {
            "id": "by_tag",
            "tag": "vip",
            "lines": [{"op": "==", "value": True, "to": "vip"}, {"op": "default", "to": "all"}],
        },
    ],
    "leaves": [
        {"id": "minors", "activity": ACTIVITY},
        {"id": "vip", "activity": ACTIVITY},
        {"id": "all", "activity": ACTIVITY},
    ],
}


def test_an_operator_draws_saves_and_is_told_why_a_tree_is_refused(
    demo_server: Server, tab: OpenTab
) -> None:
    operator = demo_server.operator()
    console = tab(demo_server.url + "/console", DESKTOP)
    log_in(console, operator)
    console.page.get_by_role("tab", name="Trees").click()
    drawing = console.page.get_by_test_id("tree")
    expect(drawing).to_contain_text("by_age: age?")

    bad = json.loads(json.dumps(GOOD))
    bad["nodes"][1]["lines"] = [{"op": "==", "value": True, "to": "by_age"}]
    bad["leaves"][2]["activity"] = 4242
    console.page.locator("#tree-name").fill("newcomers")
    console.page.locator("#tree-text").fill(json.dumps(bad, indent=2))
    expect(drawing).to_contain_text("back to by_age (a cycle)")
    console.page.locator("#tree-save").click()
    problems = console.page.locator("#tree-problems li")
    expect(problems.first).to_be_visible()
    reasons = {problems.nth(i).get_attribute("data-reason") for i in range(problems.count())}
    assert {"missing_default", "unknown_activity"} <= reasons
    console.screenshot("console-trees-refused")

    console.page.locator("#tree-text").fill(json.dumps(GOOD, indent=2))
    console.page.locator("#tree-save").click()
    expect(console.page.locator('[data-tree="newcomers"]')).to_have_text("newcomers · v1")
    expect(problems).to_have_count(0)
    expect(drawing.locator("li.leaf")).to_have_count(3)
    expect(drawing).to_contain_text("tag vip?")
    console.screenshot("console-trees")

    credentials = {"name": "pia", "password": PASSWORD}
    assert httpx.post(f"{demo_server.url}/api/auth/register", json=credentials).status_code == 201
    token = httpx.post(f"{demo_server.url}/api/auth/login", json=credentials).json()["token"]
    mine = httpx.get(
        f"{demo_server.url}/api/me/route/newcomers", headers={"Authorization": f"Bearer {token}"}
    )
    assert (mine.status_code, mine.json()["activity_id"], mine.json()["leaf"]) == (
        200,
        ACTIVITY,
        "all",
    )
    assert console.errors == [REFUSED], "only the refused save logs an error"
