"""Fast refusals on fakes: a user the database found without a chance is refused without
touching the shards, and never while a chance is there (service/refusals.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from raffle.adapters.chance_hints import CREDIT_SECONDS, MARK_SECONDS
from raffle.domain.awards import Award, AwardKind
from raffle.domain.quota import NoChances
from raffle.service.deliverers import DeliveryContext
from raffle.service.delivery import deliver, won_message
from raffle.service.draw import Draw, DrawResult, draw
from raffle.service.quotas import my_account
from raffle.service.refusals import crediting
from tests.unit.usecase_world import ACTIVITY, PRIZE, SKU, WELCOME, WELCOME_PACK, World, world
from tests.unit.watched_shards import WatchedShards

NOON = datetime(2026, 11, 21, 4, tzinfo=UTC)  # 12:00 in Shanghai, the activity's zone


async def _draw(w: World, watched: WatchedShards, key: str | None = None) -> DrawResult:
    return await draw(
        Draw("alice", ACTIVITY, key), catalogue=w.catalogue, shards=watched.shards,
        stock=w.stock, rng=w.rng, clock=w.clock, hints=w.hints,
    )  # fmt: skip


async def _spent(w: World) -> WatchedShards:
    """Alice's three chances of the day drawn, and the fourth refused by the database."""
    watched = WatchedShards(w.shards)
    for _ in range(3):
        await _draw(w, watched)
    with pytest.raises(NoChances):
        await _draw(w, watched)
    watched.uses = 0
    return watched


async def test_after_the_database_refused_a_draw_the_next_refusals_touch_no_shard() -> None:
    w = world()
    w.clock.current = NOON
    watched = await _spent(w)
    for _ in range(5):
        with pytest.raises(NoChances):
            await _draw(w, watched)
    assert watched.uses == 0
    assert len(w.shards.store.orders) == 3


async def test_a_top_up_is_seen_by_the_very_next_draw() -> None:
    w = world()
    w.clock.current = NOON
    watched = await _spent(w)
    assert (await w.top_up()).credited
    assert (await _draw(w, watched)).draw_count == 4
    assert watched.uses > 0


async def test_a_new_day_goes_to_the_database_once() -> None:
    w = world()
    w.clock.current = NOON
    watched = await _spent(w)
    w.clock.current = NOON + timedelta(days=1)
    assert (await _draw(w, watched)).draw_count == 4


async def test_a_retry_of_a_draw_that_went_to_the_database_replays_it_after_a_mark() -> None:
    w = world()
    w.clock.current = NOON
    watched = WatchedShards(w.shards)
    await _draw(w, watched)
    await _draw(w, watched)
    last = await _draw(w, watched, key="k-3")
    with pytest.raises(NoChances):
        await _draw(w, watched, key="k-4")  # the database refuses, and marks
    with pytest.raises(NoChances):
        await _draw(w, watched, key="k-5")  # a new key: refused from the mark
    again = await _draw(w, watched, key="k-3")
    assert (again.replayed, again.order_id) == (True, last.order_id)


async def test_a_credit_in_flight_voids_marks_and_stops_new_ones() -> None:
    w = world()
    w.clock.current = NOON
    watched = await _spent(w)
    async with crediting(w.hints, [("alice", ACTIVITY)], w.clock):
        for _ in range(2):  # the database is asked each time: no mark while in flight
            watched.uses = 0
            with pytest.raises(NoChances):
                await _draw(w, watched)
            assert watched.uses > 0
    with pytest.raises(NoChances):
        await _draw(w, watched)  # the database again: marks read before the credit are void
    watched.uses = 0
    with pytest.raises(NoChances):
        await _draw(w, watched)
    assert watched.uses == 0  # and marked again


async def test_a_mark_read_before_a_credit_that_committed_meanwhile_is_never_trusted() -> None:
    w = world()
    w.clock.current = NOON
    holder, scope = ("alice", ACTIVITY), "2026-11-21/2026-11/x"
    before = await w.hints.look(holder, scope, None, w.clock.now())
    assert before.generation is not None
    await w.hints.begin_credit([holder], "credit-1", w.clock.now())
    await w.hints.end_credit([holder], "credit-1", w.clock.now())
    await w.hints.mark(holder, scope, before.generation, w.clock.now())  # the draw's, late
    assert not (await w.hints.look(holder, scope, None, w.clock.now())).refused


async def test_a_credit_that_never_left_keeps_marks_off_until_it_expires() -> None:
    w = world()
    w.clock.current = NOON
    holder, scope = ("alice", ACTIVITY), "s"
    await w.hints.begin_credit([holder], "crashed", w.clock.now())  # its process died
    look = await w.hints.look(holder, scope, None, w.clock.now())
    assert look == type(look)(refused=False, generation=None)
    w.clock.advance(CREDIT_SECONDS + 1)
    look = await w.hints.look(holder, scope, None, w.clock.now())
    assert look.generation is not None
    await w.hints.mark(holder, scope, look.generation, w.clock.now())
    assert (await w.hints.look(holder, scope, None, w.clock.now())).refused


async def test_a_mark_lives_its_life() -> None:
    w = world()
    w.clock.current = NOON
    watched = await _spent(w)
    w.clock.advance(MARK_SECONDS - 1)
    with pytest.raises(NoChances):
        await _draw(w, watched)
    assert watched.uses == 0
    w.clock.advance(2)
    with pytest.raises(NoChances):
        await _draw(w, watched)
    assert watched.uses > 0  # an old mark: the database is asked


async def test_a_welcome_pack_given_to_the_activity_after_a_refusal_is_seen_at_once() -> None:
    w = world(welcome=None)
    w.clock.current = NOON
    watched = WatchedShards(w.shards)
    with pytest.raises(NoChances):
        await _draw(w, watched)
    w.config.packs[WELCOME] = WELCOME_PACK
    activity = w.config.activities[ACTIVITY]
    w.config.activities[ACTIVITY] = replace(activity, welcome_pack=WELCOME)
    assert (await _draw(w, watched)).draw_count == 1


async def test_a_chance_prize_for_a_refused_user_is_seen_at_once() -> None:
    w = world(rate="1")
    w.clock.current = NOON
    w.config.awards[PRIZE] = Award(PRIZE, AwardKind.CHANCES, "five more", str(SKU))
    watched = await _spent(w)
    ctx = DeliveryContext(w.catalogue, w.uow, w.shards, w.clock, w.hints)
    for order_id in list(w.shards.store.wins):
        await deliver(won_message(w.shards.store.wins[order_id], w.clock.now()), ctx)
    assert (await _draw(w, watched)).draw_count == 4


async def test_a_first_look_after_a_refusal_with_no_welcome_pack_changes_nothing() -> None:
    w = world(welcome=None)
    w.clock.current = NOON
    watched = WatchedShards(w.shards)
    with pytest.raises(NoChances):
        await _draw(w, watched)
    account = await my_account(
        "alice", ACTIVITY, catalogue=w.catalogue, shards=w.shards, clock=w.clock, hints=w.hints
    )
    assert account.chances == 0
    watched.uses = 0
    with pytest.raises(NoChances):
        await _draw(w, watched)
    assert watched.uses == 0  # opening an empty account credits nothing: the mark stands
