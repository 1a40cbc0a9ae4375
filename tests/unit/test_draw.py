import json
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from raffle.domain.activity import ActivityState
from raffle.domain.draws import ActivityNotOpen, UnknownActivity
from raffle.domain.errors import Contention
from raffle.domain.quota import NoChances, QuotaPack
from raffle.service.draw import WON, Draw, draw
from raffle.service.idempotency import KeyReused
from tests.unit.usecase_world import ACTIVITY, PRIZE, STRATEGY, THANKS, world


async def test_a_first_visit_gets_the_welcome_pack_and_a_draw_uses_one_chance() -> None:
    w = world()
    result = await w.draw()
    assert result.draw_count == 1
    assert result.award_id in {PRIZE, THANKS}
    account = await w.shards.for_user("alice").__aenter__()
    got = await account.quotas.get("alice", ACTIVITY, "2026-11-21", "2026-11")
    assert got is not None
    assert (got.total_left, got.day_left, got.month_left) == (9, 2, 29)


async def test_the_order_the_win_and_the_outbox_message_are_written_together() -> None:
    w = world(rate="1")
    result = await w.draw(key="k-1")
    store = w.shards.store
    order = store.orders[result.order_id]
    assert (order.user_id, order.state, order.draw_count, order.request_key) == (
        "alice",
        "used",
        1,
        "k-1",
    )
    assert store.wins[result.order_id].award_id == PRIZE
    [message] = store.outbox
    assert message.topic == WON
    assert message.key == result.order_id
    assert len(message.message_id) == 32
    assert json.loads(message.payload)["award_id"] == PRIZE


async def test_the_day_quota_stops_the_fourth_draw_and_changes_nothing() -> None:
    w = world()
    for _ in range(3):
        await w.draw()
    with pytest.raises(NoChances):
        await w.draw()
    assert len(w.shards.store.orders) == 3
    assert len(w.shards.store.outbox) == 3


async def test_the_next_day_in_the_activitys_zone_brings_the_day_quota_back() -> None:
    w = world()
    w.clock.current = datetime(2026, 11, 21, 15, 59, 59, 900_000, tzinfo=UTC)  # 23:59:59.9 Shanghai
    for _ in range(3):
        await w.draw()
    w.clock.current = datetime(2026, 11, 21, 16, 0, 0, 100_000, tzinfo=UTC)  # 00:00:00.1 next day
    assert (await w.draw()).draw_count == 4


async def test_without_a_welcome_pack_there_are_no_chances() -> None:
    w = world(welcome=None)
    with pytest.raises(NoChances):
        await w.draw()
    assert w.shards.store.orders == {}


async def test_a_retry_with_the_same_key_replays_and_spends_nothing() -> None:
    w = world()
    first = await w.draw(key="same")
    again = await w.draw(key="same")
    assert again.replayed
    assert (again.order_id, again.award_id, again.draw_count) == (first.order_id, first.award_id, 1)
    assert len(w.shards.store.orders) == 1
    assert w.shards.store.accounts["alice", ACTIVITY][1] == 9


@pytest.mark.parametrize(
    "state", [ActivityState.EDIT, ActivityState.APPROVED, ActivityState.CLOSED]
)
async def test_only_running_activities_draw(state: ActivityState) -> None:
    w = world()
    w.set_state(state)
    with pytest.raises(ActivityNotOpen):
        await w.draw()
    assert w.shards.store.accounts == {}


async def test_outside_the_window_there_is_no_draw() -> None:
    w = world()
    w.clock.current = datetime(2027, 1, 1, tzinfo=UTC)
    with pytest.raises(ActivityNotOpen):
        await w.draw()


async def test_an_unknown_activity_is_an_error() -> None:
    w = world()
    with pytest.raises(UnknownActivity):
        await draw(
            Draw("alice", 404),
            catalogue=w.catalogue,
            shards=w.shards,
            stock=w.stock,
            rng=w.rng,
            clock=w.clock,
            hints=w.hints,
        )


async def test_stock_is_taken_for_every_stocked_win_and_then_the_fallback_comes() -> None:
    w = world(rate="1", stock=2, welcome=QuotaPack(21, 10, 10, 10))
    results = [await w.draw() for _ in range(4)]
    assert [r.award_id for r in results] == [PRIZE, PRIZE, THANKS, THANKS]
    assert [r.rule for r in results][2:] == ["stock", "stock"]
    assert w.stock.levels[STRATEGY, PRIZE] == 0


async def test_rules_see_the_draw_count_including_the_current_draw() -> None:
    w = world(rate="1", prize_rules=(("lock", "3"),), welcome=QuotaPack(21, 10, 10, 10))
    results = [await w.draw() for _ in range(4)]
    assert [r.award_id for r in results] == [THANKS, THANKS, PRIZE, PRIZE]
    assert [r.draw_count for r in results] == [1, 2, 3, 4]


async def test_a_failed_commit_gives_the_stock_back() -> None:
    w = world(rate="1", stock=1)

    async def broken() -> None:
        raise RuntimeError("disk full")

    original = w.shards.for_user

    def failing(user_id: str):  # type: ignore[no-untyped-def]
        uow = original(user_id)
        uow.commit = broken  # type: ignore[method-assign]
        return uow

    w.shards.for_user = failing  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        await w.draw()
    assert w.stock.levels[STRATEGY, PRIZE] == 1
    assert len(w.stock.given_back) == 1
    assert w.shards.store.orders == {}


async def test_a_deadlock_victim_is_drawn_again_and_spends_one_chance() -> None:
    w = world(rate="1", stock=5)
    original, failures = w.shards.for_user, [Contention("deadlock")]

    def sometimes_failing(user_id: str):  # type: ignore[no-untyped-def]
        uow = original(user_id)
        if failures:
            error = failures.pop()

            async def refuse() -> None:
                raise error

            uow.commit = refuse  # type: ignore[method-assign]
        return uow

    w.shards.for_user = sometimes_failing  # type: ignore[method-assign]
    result = await w.draw()
    assert result.award_id == PRIZE
    assert len(w.shards.store.orders) == 1
    assert w.shards.store.accounts["alice", ACTIVITY][1] == 9
    assert w.stock.levels[STRATEGY, PRIZE] == 4  # the first attempt's unit came back


async def test_a_draw_key_reused_in_another_activity_is_refused() -> None:
    w = world()
    w.config.activities[2] = replace(w.config.activities[ACTIVITY], id=2)
    await w.draw(key="k")
    with pytest.raises(KeyReused):
        await draw(
            Draw("alice", 2, "k"),
            catalogue=w.catalogue,
            shards=w.shards,
            stock=w.stock,
            rng=w.rng,
            clock=w.clock,
            hints=w.hints,
        )
    assert len(w.shards.store.orders) == 1
