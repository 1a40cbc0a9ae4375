"""The pages in a real browser: Debian's Chromium driven by Playwright, headless, against a
`raffle serve` process of its own (embedded SQLite in a temporary folder).

Every page a test opens (`tab(url, viewport)`) records the browser's console errors in
`Tab.errors`; a test ends by asserting there were none, or exactly those it provoked.
`Tab.screenshot(name)` saves under `artifacts/screenshots/`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Page,
    Playwright,
    ViewportSize,
    expect,
    sync_playwright,
)

from tests.conftest import unavailable
from tests.raffle_process import RAFFLE, wait_until_serving
from tests.services import free_port

CHROMIUM = os.environ.get("RAFFLE_TEST_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = Path(__file__).parents[2] / "artifacts" / "screenshots"
PHONE: ViewportSize = {"width": 375, "height": 812}
DESKTOP: ViewportSize = {"width": 1280, "height": 900}
PASSWORD = "correct horse battery"
# How long an action or an expect() waits for the page. Expect's own default, 5 s, is less
# than the pages take on a slow machine to show what they read again by themselves: my
# prizes are read again 0.5, 1.5, 3.5 and 7.5 s after a draw, so a delivery done after the
# read at 3.5 s shows at 7.5 s; the console's live view, every 3 s and then its five reads.
WAIT_MS = 15_000
expect.set_options(timeout=WAIT_MS)
# Without the networking flags Chromium reaches for Google's hosts, which this machine refuses.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class Server:
    """A running `raffle serve`; `url` is its base address."""

    url: str
    folder: Path
    env: dict[str, str]

    def raffle(self, *args: str, stdin: str | None = None) -> str:
        """Run a `raffle` command on this server's database (e.g. `user create`)."""
        done = subprocess.run(
            [str(RAFFLE), *args],
            env=self.env,
            cwd=self.folder,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def operator(self, name: str = "operator") -> str:
        self.raffle("user", "create", name, "--admin", "--password", PASSWORD)
        return name


def _serve(
    folder: Path, *, demo: bool, settings: Mapping[str, str] | None = None
) -> Iterator[Server]:
    """`settings`: more RAFFLE_* variables for this server (RAFFLE_PORT: its port, for a
    server whose address another process must know first)."""
    port = int((settings or {}).get("RAFFLE_PORT") or free_port())
    env = {
        **os.environ,
        "RAFFLE_DATABASE_URL": f"sqlite:///{folder / 'raffle.db'}",
        "RAFFLE_PORT": str(port),
        "RAFFLE_LOAD_DEMO": "true" if demo else "false",
        "RAFFLE_REGISTRATIONS_PER_HOUR": "1000",
        **(settings or {}),
    }
    process = subprocess.Popen([str(RAFFLE), "serve"], env=env, cwd=folder)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(url, process)
        yield Server(url, folder, env)
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def demo_server(tmp_path: Path) -> Iterator[Server]:
    """The embedded default as `raffle serve` starts it: the demo campaign, running."""
    yield from _serve(tmp_path, demo=True)


@pytest.fixture
def blank_server(tmp_path: Path) -> Iterator[Server]:
    """A server on an empty database: no campaign, no activity, no user."""
    yield from _serve(tmp_path, demo=False)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """`serve(demo=False, RAFFLE_X="...", ...)`: a server started with these settings, on an
    empty database (`demo`: with the demo campaign)."""
    with ExitStack() as servers:
        yield lambda demo=False, **settings: servers.enter_context(
            contextmanager(_serve)(tmp_path, demo=demo, settings=settings)
        )


@pytest.fixture
def one_try_server(tmp_path: Path) -> Iterator[Server]:
    """A blank server that tries a delivery once before its dead-letter queue: a delivery
    that cannot succeed is marked failed at once."""
    yield from _serve(tmp_path, demo=False, settings={"RAFFLE_DELIVERY_ATTEMPTS": "1"})


# Module-scoped: while Playwright's sync API is started, its event loop counts as running in
# this thread, and the async tests of any module collected after it could not run theirs.
@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    if not Path(CHROMIUM).exists():
        unavailable(f"no Chromium at {CHROMIUM} (make test installs Debian's chromium)")
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def chromium(playwright: Playwright) -> Iterator[Browser]:
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
    yield browser
    browser.close()


@dataclass
class Tab:
    """A page with its console recorded: `errors` holds every console error and uncaught
    exception, so a test can assert there were none (or only those it provoked)."""

    page: Page
    errors: list[str] = field(default_factory=list)

    def screenshot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


OpenTab = Callable[..., Tab]


@pytest.fixture
def tab(chromium: Browser) -> Iterator[OpenTab]:
    """`tab(url, viewport=DESKTOP, time_zone=None, locale="en-US")`: a page in a fresh context
    (its own storage, so its own session), the console recorded; `time_zone` (e.g.
    "America/New_York") is the browser's, the machine's if None; `locale` its language (the
    player page speaks the browser's)."""
    opened: list[Tab] = []
    yield lambda url, viewport=DESKTOP, time_zone=None, locale="en-US": _open(
        chromium, opened, url, viewport, time_zone, locale
    )
    for each in opened:
        each.page.context.close()


def _open(
    chromium: Browser,
    opened: list[Tab],
    url: str,
    viewport: ViewportSize,
    time_zone: str | None,
    locale: str,
) -> Tab:
    context = chromium.new_context(viewport=viewport, timezone_id=time_zone, locale=locale)
    context.set_default_timeout(WAIT_MS)
    tab = Tab(context.new_page())

    def record(message: ConsoleMessage) -> None:
        if message.type == "error":
            tab.errors.append(message.text)

    tab.page.on("console", record)
    tab.page.on("pageerror", lambda error: tab.errors.append(f"uncaught: {error}"))
    opened.append(tab)
    tab.page.goto(url)
    return tab
