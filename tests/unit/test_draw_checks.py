"""The draw's checks before its transaction: one order, and a refusal keeps the chance."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import datetime

import pytest

from raffle.adapters.rate_limits import MemoryRateLimiter
from raffle.domain.activity import ActivityState
from raffle.domain.deny import Denied, DenyKind
from raffle.domain.draws import ActivityNotOpen
from raffle.domain.errors import RaffleError
from raffle.domain.join_codes import JoinCodeRequired
from raffle.domain.profiles import Profile
from raffle.domain.quota import NoChances, QuotaPack
from raffle.domain.switches import DrawsPaused
from raffle.domain.users import RateLimited
from raffle.service.deny_board import DenyBoard
from raffle.service.draw_checks import DrawChecks
from raffle.service.join_code_gate import JoinCodeGate
from raffle.service.ports.deny import StoredDenials
from raffle.service.switchboard import SwitchBoard
from tests.unit.test_deny import NOW, NoNews, entry
from tests.unit.test_join_code_gate import Codes, Uow
from tests.unit.test_switches import LIMITS, MemorySwitchStore
from tests.unit.usecase_world import ACTIVITY, WELCOME, World, world


class DenyStore:
    def __init__(self, *denied: str) -> None:
        self.stored = StoredDenials(1, [entry(DenyKind.USER, u) for u in denied], [])

    async def version(self) -> int:
        return self.stored.version

    async def load(self, now: datetime) -> StoredDenials:
        return self.stored


class NoProfiles:
    """Only users are listed: the screen never reads a profile."""

    async def of(self, user_id: str) -> Profile:
        raise AssertionError("no phone or device is listed: no profile to read")

    def changes(self) -> AsyncIterator[None]:
        raise NotImplementedError


async def checks(w: World, *denied: str, paused: bool = False, per_second: int = 10) -> DrawChecks:
    deny = DenyBoard(DenyStore(*denied), NoNews(), w.clock)
    await deny.refresh()
    store = MemorySwitchStore()
    if paused:
        await store.change(f"activity.{ACTIVITY}.draws", "off", "on", "root", NOW)
    await store.change("draws_per_second", str(per_second), "10", "root", NOW)
    switches = SwitchBoard(store, NoNews(), LIMITS)
    await switches.refresh()
    gate = JoinCodeGate(lambda: Uow(Codes()))  # type: ignore[arg-type, return-value]
    limiter = MemoryRateLimiter(w.clock)
    return DrawChecks(deny, NoProfiles(), switches, limiter, gate)  # type: ignore[arg-type]


async def refusal(w: World, user: str, with_checks: DrawChecks) -> type[RaffleError]:
    with pytest.raises(RaffleError) as refused:
        await w.draw(user, checks=with_checks)
    return type(refused.value)


async def test_the_deny_lists_come_first_then_the_pause_then_the_rate_limit() -> None:
    w = world()
    every = await checks(w, "mallory", paused=True, per_second=1)
    assert await refusal(w, "mallory", every) is Denied
    assert await refusal(w, "alice", every) is DrawsPaused
    assert await refusal(w, "alice", every) is DrawsPaused  # not the rate limit: it comes after
    limited = await checks(w, per_second=1)
    await w.draw("alice", checks=limited)
    assert await refusal(w, "alice", limited) is RateLimited


async def test_the_rate_limit_counts_only_what_the_fast_refusal_lets_through() -> None:
    w = world(welcome=QuotaPack(WELCOME, 1, 1, 1))
    limited = await checks(w, per_second=1)
    await w.draw("alice", checks=limited)  # the one chance, and the second's rate limit
    assert await refusal(w, "alice", limited) is RateLimited
    w.clock.advance(1)  # a new window: the database refuses, and marks the account
    assert await refusal(w, "alice", limited) is NoChances
    for _ in range(5):  # answered from the mark, in that window: not counted, never limited
        assert await refusal(w, "alice", limited) is NoChances
    w.clock.advance(1)
    await w.top_up("alice")  # a credit: the mark is void, and the draw is counted again
    await w.draw("alice", checks=limited)
    assert await refusal(w, "alice", limited) is RateLimited


async def test_the_activity_is_looked_at_open_before_its_join_code() -> None:
    w = world()
    activity = w.config.activities[ACTIVITY]
    w.config.activities[ACTIVITY] = replace(activity, join_code_required=True)
    every = await checks(w)
    assert await refusal(w, "alice", every) is JoinCodeRequired
    w.set_state(ActivityState.CLOSED)
    assert await refusal(w, "alice", every) is ActivityNotOpen


async def test_a_player_without_a_join_code_is_rate_limited_before_it_is_read() -> None:
    w = world()
    activity = w.config.activities[ACTIVITY]
    w.config.activities[ACTIVITY] = replace(activity, join_code_required=True)
    limited = await checks(w, per_second=1)
    assert await refusal(w, "alice", limited) is JoinCodeRequired  # its codes read once
    assert await refusal(w, "alice", limited) is RateLimited  # not read again this second


async def test_a_draw_refused_by_its_checks_keeps_the_chance() -> None:
    w = world()
    for refused in (await checks(w, "alice"), await checks(w, paused=True)):
        assert await refusal(w, "alice", refused) in (Denied, DrawsPaused)
    result = await w.draw("alice")
    assert result.draw_count == 1  # the refused ones took nothing
