"""Driving the player page (`/`, web/player.js) from browser tests; the operator-console tests
use these to make a player win in an activity the operator created.

The page speaks the browser's language; `tab()` opens it in an en-US browser, so the English
names below hold (tests/browser/test_languages.py covers Chinese).

The page's stable hooks, kept for these helpers:
- login form `[data-testid=login]`: fields labelled "Name" and "Password", buttons "Log in"
  and "Register"; once in, `[data-testid=logout]` is in the header.
- activity chooser `[data-testid=activity]` (a <select> of activity ids; the choice is kept in
  the URL hash `#/activity/ID`); the board `[data-testid=board]` names the activity shown in
  `data-activity`.
- the board: `data-state` idle | spinning | done | error, `data-draws` (draws finished on
  this page) and `data-layout` grid | wheel; cells `[data-testid=cell][data-award=ID]` (on the
  wheel, `[data-testid=sector]`), the lit one with class `lit`; the
  button `[data-testid=draw]`; `[data-testid=result]` names the prize won;
  `[data-testid=draw-reason]` says why the button is off.
- `[data-testid=chances]` has `data-chances` (draws possible now), `data-total-left`,
  `data-day-left`, `data-month-left`; `[data-testid=points]` has `data-available`.
- `[data-testid=my-prize]` items (`data-order`, `data-state` create | completed | failed) with
  `[data-testid=delivery]`, and `[data-testid=more-prizes]` while there is an older page;
  `#notice` is the message bar.
"""

from __future__ import annotations

import sqlite3
import uuid

import httpx
from playwright.sync_api import Page, expect

from tests.browser.conftest import PASSWORD, Server


def register(page: Page, name: str, password: str = PASSWORD) -> None:
    """Register a new player on the login form and wait until the page is in."""
    _credentials(page, name, password)
    page.get_by_role("button", name="Register").click()
    expect(page.get_by_test_id("logout")).to_be_visible()


def log_in(page: Page, name: str, password: str = PASSWORD) -> None:
    _credentials(page, name, password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_test_id("logout")).to_be_visible()


def _credentials(page: Page, name: str, password: str) -> None:
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Password", exact=True).fill(password)


def choose_activity(page: Page, activity_id: int) -> None:
    """Pick the activity in the chooser and wait until its board is shown."""
    page.get_by_test_id("activity").select_option(str(activity_id))
    expect(page.get_by_test_id("board")).to_have_attribute("data-activity", str(activity_id))
    expect(page.get_by_test_id("chances")).to_be_visible()


def chances(page: Page) -> int:
    """Draws possible now, as the page shows them."""
    return int(page.get_by_test_id("chances").get_attribute("data-chances") or "0")


def draw(page: Page) -> str:
    """Click draw, wait for the board to land, and return the title of the prize won."""
    board = page.get_by_test_id("board")
    done = int(board.get_attribute("data-draws") or "0")
    page.get_by_test_id("draw").click()
    expect(board).to_have_attribute("data-draws", str(done + 1))
    expect(board).to_have_attribute("data-state", "done")
    return page.get_by_test_id("result").inner_text()


def token(page: Page) -> str:
    """The page's session token (what api.js keeps in localStorage)."""
    found = page.evaluate("localStorage.getItem('raffle.token')")
    assert isinstance(found, str)
    return found


def operator_headers(server: Server, name: str = "operator") -> dict[str, str]:
    """Create an operator (admin) on the server and return its Authorization header."""
    server.operator(name)
    answer = httpx.post(f"{server.url}/api/auth/login", json={"name": name, "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['token']}"}


def post(server: Server, path: str, headers: dict[str, str], **body: object) -> httpx.Response:
    """A POST to the server with these headers and an Idempotency-Key of its own."""
    headers = {**headers, "Idempotency-Key": str(uuid.uuid4())}
    return httpx.post(server.url + path, headers=headers, **body)


def load_campaign(server: Server, headers: dict[str, str], text: str) -> httpx.Response:
    """Post a campaign file (YAML) as the operator whose `headers` these are."""
    yaml = {**headers, "Content-Type": "application/yaml"}
    return post(server, "/api/admin/campaigns", yaml, content=text)


def take_free_codes(server: Server, pool: str) -> None:
    """An operator's mistake: the pool's free codes deleted from the database by hand."""
    with sqlite3.connect(server.folder / "raffle.db", timeout=30) as db:
        db.execute("DELETE FROM code_pool WHERE pool = ? AND order_id IS NULL", (pool,))
