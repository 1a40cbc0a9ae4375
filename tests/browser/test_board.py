"""The prize board shows each prize once: with 3 and 8 prizes on the nine-grid (cells no prize
fills are empty, not a prize again), with 12 on a wheel whose sectors are as wide as the
published odds; the light and the wheel come to rest on the prize the server returned."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from playwright.sync_api import Page, expect

from tests.browser.conftest import DESKTOP, PHONE, OpenTab, Server
from tests.browser.player import choose_activity, draw, load_campaign, operator_headers, register

# Eleven prizes and the fallback; the activities' strategies take the first 2, 7 and 11 of
# them, so that their boards hold 3, 8 and 12 prizes.
TITLES = [f"奖品{n}" for n in "一二三四五六七八九十"] + ["奖品十一"]
RATES = ["0.2", "0.15", "0.1", "0.08", "0.07", "0.06", "0.05", "0.04", "0.03", "0.02", "0.005"]
FALLBACK, FALLBACK_TITLE = 399, "谢谢参与"
AWARDS = {301 + i: title for i, title in enumerate(TITLES)} | {FALLBACK: FALLBACK_TITLE}
BOARDS = {3: 400003, 8: 400008, 12: 400012}  # prizes on the board -> activity


def _campaign() -> str:
    awards = [f"  - {{id: {i}, kind: physical, title: {t}}}" for i, t in AWARDS.items()]
    awards[-1] = f"  - {{id: {FALLBACK}, kind: thanks, title: {FALLBACK_TITLE}}}"
    strategies, activities = [], []
    for size, activity in BOARDS.items():
        prizes = ", ".join(f"{{award: {301 + i}, rate: {RATES[i]}}}" for i in range(size - 1))
        strategies.append(f"  - {{id: {activity}, fallback: {FALLBACK}, prizes: [{prizes}]}}")
        activities.append(
            f"  - {{id: {activity}, name: 九宫格{size}, strategy: {activity}, state: running,"
            " welcome_pack: 41, begin_at: 2026-01-01T00:00:00+08:00,"
            " end_at: 2030-01-01T00:00:00+08:00}"
        )
    return "\n".join(
        [
            "awards:",
            *awards,
            "packs:",
            "  - {id: 41, total: 20, day: 20, month: 20}",
            "strategies:",
            *strategies,
            "activities:",
            *activities,
        ]
    )


def _titles(page: Page, selector: str) -> list[str]:
    return page.locator(selector).all_inner_texts()


def _grid(page: Page, size: int) -> None:
    board = page.get_by_test_id("board")
    expect(board).to_have_attribute("data-layout", "grid")
    cells = page.get_by_test_id("cell")
    expect(cells).to_have_count(size)
    titles = _titles(page, "[data-testid=cell] .cell-title")
    assert sorted(titles) == sorted([*TITLES[: size - 1], FALLBACK_TITLE])  # each once
    awards = [cells.nth(i).get_attribute("data-award") for i in range(size)]
    assert len(set(awards)) == size
    empty = page.get_by_test_id("empty-cell")
    expect(empty).to_have_count(8 - size)
    for i in range(8 - size):
        expect(empty.nth(i)).to_have_text("")  # plainly nothing: no title, no badge


def _wheel(page: Page) -> None:
    expect(page.get_by_test_id("board")).to_have_attribute("data-layout", "wheel")
    sectors = page.get_by_test_id("sector")
    expect(sectors).to_have_count(12)
    awards = [sectors.nth(i).get_attribute("data-award") for i in range(12)]
    assert sorted(map(int, awards)) == sorted(AWARDS)  # one sector per prize
    expect(page.get_by_test_id("empty-cell")).to_have_count(0)
    legend = _titles(page, "[data-testid=legend] .cell-title")
    assert sorted(legend) == sorted(AWARDS.values())
    # A sector's angle is its prize's published chance (the fallback's: what the rest leave).
    rates = [Decimal(r) for r in RATES] + [1 - sum(map(Decimal, RATES))]
    widths = page.evaluate(SECTOR_WIDTHS)
    for award, rate in zip([*range(301, 312), FALLBACK], rates, strict=True):
        assert abs(widths[str(award)] - float(rate) * 360) < 0.01, (award, widths)


# Each sector's angle in degrees, read back from its path (the arc's two ends seen from the
# centre; no sector here is over half the wheel).
SECTOR_WIDTHS = """() => Object.fromEntries([...document.querySelectorAll("[data-testid=sector]")]
  .map((path) => {
    const n = path.getAttribute("d").match(/-?[\\d.]+/g).map(Number); // M0 0 L x0 y0 A … x1 y1
    const [x0, y0, x1, y1] = [n[2], n[3], n[9], n[10]];
    const turn = (Math.atan2(x1, -y1) - Math.atan2(x0, -y0)) * 180 / Math.PI;
    return [path.dataset.award, (turn + 360) % 360];
  }))"""

# The sector under the pointer's tip (the top centre of the wheel), as the player sees it.
UNDER_POINTER = """() => {
  const box = document.querySelector("[data-testid=wheel] svg").getBoundingClientRect();
  const scale = box.width / 220;
  const hit = document.elementFromPoint(box.left + 110 * scale, box.top + 26 * scale);
  return hit?.dataset.award ?? null;
}"""


def _lands_on_the_prize_won(page: Page, wheel: bool) -> None:
    won = draw(page)
    award = next(i for i, title in AWARDS.items() if title == won)
    if wheel:
        page.get_by_test_id("wheel").scroll_into_view_if_needed()
        assert page.evaluate(UNDER_POINTER) == str(award), won
        expect(page.locator("[data-testid=legend].lit")).to_have_attribute("data-award", str(award))
    lit = page.locator("[data-testid=cell].lit, [data-testid=sector].lit")
    expect(lit).to_have_count(1)
    expect(lit).to_have_attribute("data-award", str(award))


def test_the_board_shows_each_prize_once(serve: Callable[..., Server], tab: OpenTab) -> None:
    server = serve(RAFFLE_DRAWS_PER_SECOND="1000")
    answer = load_campaign(server, operator_headers(server), _campaign())
    assert answer.status_code == 200, answer.text
    opened = tab(server.url, DESKTOP)  # motion on: the board moves and lands
    page = opened.page
    register(page, "board-watcher")
    for size in (3, 8):
        choose_activity(page, BOARDS[size])
        _grid(page, size)
        _lands_on_the_prize_won(page, wheel=False)
        opened.screenshot(f"board-{size}-prizes")
    choose_activity(page, BOARDS[12])
    _wheel(page)
    for _ in range(3):
        _lands_on_the_prize_won(page, wheel=True)
    opened.screenshot("board-12-prizes")
    page.set_viewport_size(PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    opened.screenshot("board-12-prizes-phone")
    assert opened.errors == []
