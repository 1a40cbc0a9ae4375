"""Both pages load from `raffle serve` at phone and desktop widths with a clean console."""

from __future__ import annotations

import httpx
import pytest

from tests.browser.conftest import DESKTOP, PHONE, OpenTab, Server


@pytest.mark.parametrize(("path", "name"), [("/", "player"), ("/console", "console")])
@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_page_loads_without_console_errors(
    demo_server: Server, tab: OpenTab, path: str, name: str, viewport: dict[str, int]
) -> None:
    opened = tab(demo_server.url + path, viewport)
    opened.page.wait_for_load_state("networkidle")
    assert opened.page.locator("header.top h1").inner_text().startswith("raffle")
    width = opened.page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], "the page scrolls sideways"
    assert opened.errors == []


def test_pages_forbid_scripts_from_anywhere_else(demo_server: Server) -> None:
    for path in ("/", "/console"):
        policy = httpx.get(demo_server.url + path).headers["content-security-policy"]
        assert "default-src 'self'" in policy
        assert "frame-ancestors 'none'" in policy
