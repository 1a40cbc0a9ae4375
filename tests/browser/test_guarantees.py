"""The player page's odds say the disclosed rules in words: the listed group's size and
each guarantee (by prizes or by level) with its prizes' chances, in English and in Chinese."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from tests.browser.conftest import OpenTab, Server
from tests.browser.player import choose_activity, register

EXAMPLES = Path(__file__).parents[2] / "examples"
GUARANTEED = EXAMPLES / "guaranteed.yaml"
BY_LEVEL = EXAMPLES / "guaranteed-levels.yaml"


def _running(server: Server, example: Path = GUARANTEED) -> None:
    text = example.read_text(encoding="utf-8")
    path = server.folder / example.name
    path.write_text(
        text.replace("    welcome_pack: 1\n", "    state: running\n    welcome_pack: 1\n")
    )
    server.raffle("load", str(path))


def test_the_odds_say_the_rules_in_the_players_language(blank_server: Server, tab: OpenTab) -> None:
    _running(blank_server)
    english = tab(blank_server.url)
    register(english.page, "ann")
    choose_activity(english.page, 1)
    rules = english.page.get_by_test_id("rules").locator("li")
    expect(rules).to_have_text([
        "3 listed users get only 1 积分 on every draw (谢谢参与 once it is gone).",
        "Your first draw in this activity wins one of: "
        "10 积分 (83.3333%), 小米台灯 (13.8889%), and 小米手机 (2.7778%).",
        "Your draw number 10 in this activity wins one of: "
        "小米台灯 (83.3333%) and 小米手机 (16.6667%).",
    ])  # fmt: skip
    english.screenshot("player-rules")
    english.page.get_by_test_id("language").select_option("zh")
    expect(rules.first).to_have_text("名单内的 3 位用户每次抽奖只得1 积分（抽完后得谢谢参与）。")
    expect(rules.last).to_have_text(
        "本活动中您的第 10 次抽奖必中以下之一：小米台灯 (83.3333%)和小米手机 (16.6667%)。"
    )
    assert english.errors == []


def test_the_odds_say_a_guarantee_by_level_in_the_players_language(
    blank_server: Server, tab: OpenTab
) -> None:
    _running(blank_server, BY_LEVEL)
    english = tab(blank_server.url)
    register(english.page, "ann")
    choose_activity(english.page, 1)
    rules = english.page.get_by_test_id("rules").locator("li")
    expect(rules).to_have_text([
        "Your draw number 10 in this activity wins a prize of level 3 or better, one of: "
        "小米台灯 (31.25%), 小米手机 (6.25%), and 小米手环 (62.5%).",
    ])  # fmt: skip
    english.page.get_by_test_id("language").select_option("zh")
    expect(rules).to_have_text([
        "本活动中您的第 10 次抽奖必中 3 等奖或更高的奖品，为以下之一："
        "小米台灯 (31.25%)、小米手机 (6.25%)和小米手环 (62.5%)。",
    ])  # fmt: skip
    assert english.errors == []
