"""The player page in Chinese and in English: every word from one catalogue per language
(web/i18n/*.json), the language chosen from the browser, switched in the header and
remembered; campaign texts shown as written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

import raffle
from raffle.domain.activity import ActivityState
from raffle.domain.draws import WinState
from raffle.domain.fulfilment import ShipmentState
from raffle.domain.payments import OrderState
from raffle.domain.policies import (
    INSUFFICIENT_POINTS,
    JOIN_LIMIT_REACHED,
    LEVEL_REQUIRED,
    NOT_IN_AUDIENCE,
    WIN_LIMIT_REACHED,
)
from tests.browser.conftest import DESKTOP, PASSWORD, OpenTab, Server
from tests.browser.player import draw, token

WEB = Path(raffle.__file__).parent / "entrypoints" / "http" / "web"
CATALOGUES = {path.stem: json.loads(path.read_text()) for path in (WEB / "i18n").glob("*.json")}
# The scripts of the player page (the console's own are in English, as console-*.js).
SCRIPTS = [path for path in WEB.glob("*.js") if not path.name.startswith("console")]
USED = re.compile(r"""\bt\("([^"]+)"[,)]""")
# t(`prefix.${value}`): a key made from a value the API answers.
MADE = re.compile(r"""\b(?:t|has)\(`([a-z_]+)\.\$\{""")
DEMO = 100301
# Words the page may show in any language: its name, and each language's name in itself.
ANY_LANGUAGE = ("raffle", "English", "中文")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def _keys_used() -> tuple[set[str], set[str]]:
    text = "\n".join(path.read_text() for path in SCRIPTS)
    return set(USED.findall(text)), set(MADE.findall(text))


def test_both_catalogues_hold_every_key_the_page_uses() -> None:
    assert set(CATALOGUES) == {"en", "zh"}
    en, zh = CATALOGUES["en"], CATALOGUES["zh"]
    assert set(en) == set(zh), set(en) ^ set(zh)
    used, made = _keys_used()
    assert len(used) > 60  # the scan finds the page's words
    assert used - set(en) == set()
    # Keys made from values: every value the API can answer has its text.
    values = {
        "activity_state": {s.value for s in ActivityState},
        "prize_state": {s.value for s in WinState},
        "order_state": {s.value for s in OrderState},  # payment orders
        "shipment": {s.value for s in ShipmentState},
        "address": {"name", "phone", "region", "line", "postcode"},
        "problem": {
            "not_authenticated",
            "rate_limited",
            "no_chances",
            "activity_not_open",
            "draws_paused",  # an operator switched the draws off
            "maintenance",
            "not_admitted",  # no participation policy admits the player
            "activity_full",  # the activity's participants cap
            "session_ended",  # an operator locked the account
            "account_locked",
            "join_code_required",
            "join_code_invalid",
            "join_code_used",
        },
        # each policy's reason for refusing a player (domain/policies.py)
        "refusal": {
            NOT_IN_AUDIENCE,
            LEVEL_REQUIRED,
            INSUFFICIENT_POINTS,
            JOIN_LIMIT_REACHED,
            WIN_LIMIT_REACHED,
        },
    }
    assert made == set(values)
    for prefix, expected in values.items():
        assert {f"{prefix}.{v}" for v in expected} <= set(en), prefix
    unused = {k for k in en if k not in used and k.split(".")[0] not in made}
    assert unused == set()  # nor words the page never shows
    for catalogue in (en, zh):
        for key, text in catalogue.items():
            forms = text.values() if isinstance(text, dict) else [text]
            assert isinstance(text, str) or "other" in text, key
            holes = {h for form in forms for h in re.findall(r"\{(\w+)\}", form)}
            english = en[key].values() if isinstance(en[key], dict) else [en[key]]
            assert holes == {h for f in english for h in re.findall(r"\{(\w+)\}", f)}, key


def _campaign_texts(server: Server, page: Page) -> list[str]:
    """What the operator and the player wrote, shown as written in any language."""
    auth = {"Authorization": f"Bearer {token(page)}"}
    activities = httpx.get(f"{server.url}/api/activities", headers=auth).json()
    odds = httpx.get(f"{server.url}/api/activities/{DEMO}", headers=auth).json()
    me = httpx.get(f"{server.url}/api/auth/me", headers=auth).json()
    texts = [a["name"] for a in activities] + [a["description"] for a in activities]
    texts += [p["title"] for p in odds["prizes"]] + [odds["fallback_title"], str(me["id"])]
    texts += [p["card"][k] for p in odds["prizes"] for k in ("level_name", "description")]
    texts += [title for rule in odds["rules"] for title in rule["titles"]]
    return sorted(texts, key=len, reverse=True)


# Every text a person meets on the page: what it shows, and what it says to a screen reader.
SHOWN = """() => [document.title, document.body.innerText,
  ...[...document.querySelectorAll("[aria-label], [title], [placeholder]")].flatMap((e) =>
    [e.getAttribute("aria-label"), e.getAttribute("title"), e.getAttribute("placeholder")])
].filter(Boolean).join("\\n")"""


def _shown(page: Page, campaign: list[str]) -> str:
    text = page.evaluate(SHOWN)
    for written in [*campaign, *ANY_LANGUAGE]:
        text = text.replace(written, "")
    return text


def _use_the_page(page: Page) -> None:
    """Sign in and draw, so that the notices, my prizes and their deliveries are shown."""
    page.get_by_test_id("sign-in").click()
    expect(page.get_by_test_id("sign-in")).to_be_disabled()
    draw(page)
    expect(page.get_by_test_id("my-prize")).to_have_count(1)


def test_the_page_speaks_chinese_and_english(demo_server: Server, tab: OpenTab) -> None:
    opened = tab(demo_server.url, DESKTOP, locale="zh-CN")
    page = opened.page
    page.emulate_media(reduced_motion="reduce")
    expect(page.locator("html")).to_have_attribute("lang", "zh")
    page.get_by_label("密码", exact=True).fill(PASSWORD)
    # A name the server refuses: its rules said in Chinese (its own reason is in English).
    page.get_by_label("用户名", exact=True).fill("小明")
    page.get_by_role("button", name="注册").click()
    expect(page.locator("#notice")).to_have_text(CATALOGUES["zh"]["login.rules"])
    page.get_by_label("用户名", exact=True).fill("xiaoming")
    page.get_by_role("button", name="注册").click()
    expect(page.get_by_test_id("board")).to_have_attribute("data-activity", str(DEMO))
    _use_the_page(page)
    expect(page.locator("#notice")).to_contain_text("恭喜抽中")
    campaign = _campaign_texts(demo_server, page)
    chinese = _shown(page, campaign)
    assert LATIN_WORD.findall(chinese) == [], chinese
    opened.screenshot("player-chinese")

    page.get_by_test_id("language").select_option("en")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.get_by_test_id("odds-panel").locator("h2")).to_have_text("Published odds")
    expect(page.get_by_test_id("draw")).to_have_text("Draw")
    expect(page.get_by_test_id("my-prize")).to_have_count(1)
    english = _shown(page, campaign)
    assert CJK.findall(english) == [], english
    page.reload()  # remembered in this browser
    expect(page.get_by_test_id("draw")).to_have_text("Draw")
    assert page.evaluate("localStorage.getItem('raffle.language')") == "en"
    opened.screenshot("player-english")

    page.get_by_test_id("language").select_option("zh")
    expect(page.get_by_test_id("draw")).to_have_text("抽奖")
    assert [e.split("status of ")[-1][:3] for e in opened.errors] == ["422"], opened.errors


def test_a_browser_in_another_language_gets_english(demo_server: Server, tab: OpenTab) -> None:
    opened = tab(demo_server.url, DESKTOP, locale="fr-FR")
    expect(opened.page.get_by_role("button", name="Log in")).to_be_visible()
    expect(opened.page.locator("html")).to_have_attribute("lang", "en")
    assert opened.errors == []
