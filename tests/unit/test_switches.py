"""Runtime switches: names and values, the snapshot, rules taken out of the published odds,
and the use cases over a switch board (fakes for the store and the news)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from datetime import datetime
from fractions import Fraction

import pytest

from raffle.domain.draws import UnknownActivity
from raffle.domain.profile_fields import PLAYER_FIELDS
from raffle.domain.rules import DrawContext
from raffle.domain.switches import (
    DrawsPaused,
    InvalidSwitch,
    SwitchChange,
    Switches,
    checked,
    default,
    switchable_rules,
    without_rules,
)
from raffle.service.activities import published_odds
from raffle.service.campaigns import UnknownStrategy
from raffle.service.draw_checks import paused
from raffle.service.switchboard import SwitchBoard
from raffle.service.switches import audit, set_switch, switches
from tests.unit.fakes import FakePrizeStock
from tests.unit.usecase_world import ACTIVITY, PRIZE, STRATEGY, THANKS, World, world

LIMITS = {"draws_per_second": 10, "registrations_per_hour": 20, "draw_batch_size": 64}


class MemorySwitchStore:
    """The SwitchStore contract in memory (SqlSwitchStore is tested on every database)."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.changes: list[SwitchChange] = []
        self.loads = 0

    async def version(self) -> int:
        return len(self.changes)

    async def load(self) -> tuple[int, Mapping[str, str]]:
        self.loads += 1
        return len(self.changes), dict(self.values)

    async def change(
        self, name: str, value: str, default: str, actor: str, at: datetime
    ) -> SwitchChange | None:
        old = self.values.get(name, default)
        if old == value:
            return None
        self.values[name] = value
        self.changes.append(SwitchChange(len(self.changes) + 1, name, old, value, actor, at))
        return self.changes[-1]

    async def audit(self, limit: int) -> list[SwitchChange]:
        return self.changes[::-1][:limit]


class HeardNews:
    def __init__(self) -> None:
        self.announced: list[int] = []

    async def announce(self, version: int) -> None:
        self.announced.append(version)

    async def changes(self) -> AsyncIterator[None]:
        yield


def test_names_have_defaults_and_values_are_checked() -> None:
    assert default("maintenance", LIMITS) == "off"
    assert default("activity.7.draws", LIMITS) == "on"
    assert default("strategy.3.rule.lock.101", LIMITS) == "on"
    assert default("draw_batch_size", LIMITS) == "64"
    for unknown in ("activity.x.draws", "strategy.3.rule.blacklist", "draws", ""):
        with pytest.raises(InvalidSwitch):
            default(unknown, LIMITS)
    assert checked("maintenance", " ON ") == "on"
    assert checked("draws_per_second", "007") == "7"
    for name, bad in [
        ("maintenance", "yes"),
        ("draws_per_second", "0"),
        ("draw_batch_size", "1001"),
    ]:
        with pytest.raises(InvalidSwitch):
            checked(name, bad)


def test_a_snapshot_reads_paused_activities_rules_off_and_limits() -> None:
    values = {
        "activity.7.draws": "off",
        "activity.8.draws": "on",
        "activity.0.draws": "off",
        "strategy.3.rule.weight": "off",
        "strategy.3.rule.lock.101": "on",
        "maintenance": "on",
        "draws_per_second": "2",
        "profile.edit.region": "on",
        "profile.edit.sn": "off",
    }
    switches = Switches.of(5, values, LIMITS)
    assert switches.player_fields == {"region"}  # on, and only on, opens a field
    assert switches.paused == {0, 7}
    assert switches.rules_off == {3: {"weight"}}
    assert switches.maintenance
    assert switches.limits == {**LIMITS, "draws_per_second": 2}
    with pytest.raises(DrawsPaused, match="activity 7"):
        paused(switches, 7)
    paused(switches, 8)


def test_switched_off_rules_leave_the_strategy_and_its_odds() -> None:
    w = world(rate="0.5", rules=(("weight", "2:2"),), prize_rules=(("lock", "3"),))
    strategy = w.config.strategies[STRATEGY]
    assert switchable_rules(strategy) == ["weight", f"lock.{PRIZE}"]
    assert without_rules(strategy, frozenset()) is strategy
    unlocked = without_rules(strategy, frozenset({f"lock.{PRIZE}"}))
    assert unlocked.prizes[0].rules == ()
    assert unlocked.rules == strategy.rules
    assert without_rules(strategy, frozenset({"weight"})).rules == ()


async def test_a_rule_switched_off_shows_in_the_published_odds_and_the_draws() -> None:
    w = world(rate="0.5", prize_rules=(("lock", "3"),))
    off: set[str] = set()
    w.catalogue = type(w.catalogue)(w.uow, ttl=0, rules_off=lambda s: frozenset(off))
    activity = await w.catalogue.activity(ACTIVITY)
    first = DrawContext("alice", draw_count=1)
    assert (await w.catalogue.engine(activity)).odds(first) == {THANKS: Fraction(1)}
    odds = await published_odds(ACTIVITY, catalogue=w.catalogue, stock=FakePrizeStock())
    assert odds.prizes[0].lock_after == 3
    off.add(f"lock.{PRIZE}")
    w.catalogue.forget()  # what the switch board's listener does on a change of rules
    engine = await w.catalogue.engine(activity)
    assert engine.odds(first) == {PRIZE: Fraction(1, 2), THANKS: Fraction(1, 2)}
    odds = await published_odds(ACTIVITY, catalogue=w.catalogue, stock=FakePrizeStock())
    assert odds.prizes[0].lock_after is None


def _board() -> SwitchBoard:
    return SwitchBoard(MemorySwitchStore(), HeardNews(), LIMITS)


async def test_setting_a_switch_applies_it_here_announces_it_and_audits_only_changes() -> None:
    w, board = world(), _board()
    seen: list[tuple[int, int]] = []
    board.listen(lambda before, now: seen.append((before.version, now.version)))
    found = await set_switch(
        f"activity.{ACTIVITY}.draws", "OFF", actor="root", board=board, uow=w.uow, clock=w.clock
    )
    assert (found.value, found.default) == ("off", "on")
    assert board.current.paused == {ACTIVITY}
    again = await set_switch(
        f"activity.{ACTIVITY}.draws", "off", actor="eve", board=board, uow=w.uow, clock=w.clock
    )
    assert again.value == "off"
    assert seen == [(0, 1)]
    news = board.news
    assert isinstance(news, HeardNews)
    assert news.announced == [1]
    [change] = await audit(board, 10)
    assert (change.name, change.old, change.new, change.actor) == (
        f"activity.{ACTIVITY}.draws",
        "on",
        "off",
        "root",
    )


async def test_a_switch_of_an_unknown_target_changes_nothing() -> None:
    w, board = world(rules=(("weight", "2:2"),)), _board()
    cases = [
        ("activity.999.draws", UnknownActivity),
        ("strategy.999.rule.weight", UnknownStrategy),
        (f"strategy.{STRATEGY}.rule.lock.{PRIZE}", InvalidSwitch),  # the prize has no lock
        ("nonsense", InvalidSwitch),
        ("profile.edit.level", InvalidSwitch),  # never a player's to change
    ]
    for name, error in cases:
        with pytest.raises(error):
            await set_switch(name, "off", actor="root", board=board, uow=w.uow, clock=w.clock)
    assert await audit(board, 10) == []


async def test_the_list_names_every_switch_with_its_value() -> None:
    w: World = world(rules=(("weight", "2:2"),), prize_rules=(("lock", "3"),))
    board = _board()
    await set_switch("draws_per_second", "3", actor="root", board=board, uow=w.uow, clock=w.clock)
    listed = {s.name: (s.value, s.default) for s in await switches(board, w.uow)}
    assert listed == {
        "maintenance": ("off", "off"),
        f"activity.{ACTIVITY}.draws": ("on", "on"),
        f"strategy.{STRATEGY}.rule.weight": ("on", "on"),
        f"strategy.{STRATEGY}.rule.lock.{PRIZE}": ("on", "on"),
        **{f"profile.edit.{field}": ("off", "off") for field in PLAYER_FIELDS},
        "draws_per_second": ("3", "10"),
        "registrations_per_hour": ("20", "20"),
        "draw_batch_size": ("64", "64"),
    }


async def test_the_board_reads_the_store_only_when_the_version_moved() -> None:
    store = MemorySwitchStore()
    board = SwitchBoard(store, HeardNews(), LIMITS)
    await board.refresh()
    assert store.loads == 0  # version 0: nothing set
    await store.change("maintenance", "on", "off", "root", datetime(2026, 1, 1))
    await board.refresh()
    await board.refresh()
    assert store.loads == 1
    assert board.current.maintenance


class SilentNews(HeardNews):
    """News that cannot be had (Redis down)."""

    async def changes(self) -> AsyncIterator[None]:
        raise ConnectionError("no Redis")
        yield  # an async generator all the same


async def test_without_news_the_board_looks_at_the_store_itself() -> None:
    store = MemorySwitchStore()
    board = SwitchBoard(store, SilentNews(), LIMITS)
    changed = asyncio.Event()
    board.listen(lambda before, now: changed.set())
    await store.change("activity.7.draws", "off", "on", "root", datetime(2026, 1, 1))
    watching = asyncio.create_task(board.watch())
    try:
        # A deadline for a failing run, not a speed bound.
        await asyncio.wait_for(changed.wait(), timeout=30)
    finally:
        watching.cancel()
    assert board.current.paused == {7}
