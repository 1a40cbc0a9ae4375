"""The caps in the draw (service/caps.py through take_prize), on in-memory counters: a winner's
slot is taken before the stock, kept across a redraw, given back with a fallback."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from raffle.adapters.prize_stock import MemoryPrizeStock
from raffle.adapters.randomness import SeededRandomSource
from raffle.domain.activity import Activity, ActivityState
from raffle.domain.caps import CAPPED, ActivityFull, Cap, Caps
from raffle.domain.engine import DrawEngine
from raffle.domain.strategy import Exhaustion
from raffle.service.drawing import give_back_prize, take_prize
from raffle.service.ports import Attempt, Draw
from tests.unit.builders import FALLBACK, awards, strategy

NOW = datetime(2026, 6, 1, tzinfo=UTC)
ACTIVITY = 5


def counters(left: dict[int, dict[int, int]]) -> MemoryPrizeStock:
    async def load(scope: int) -> dict[int, int]:
        return dict(left.get(scope, {}))

    return MemoryPrizeStock(load)


def attempt(engine: DrawEngine, caps: Caps, stock: MemoryPrizeStock, slots: MemoryPrizeStock,
            user: str = "u") -> Attempt:  # fmt: skip
    activity = Activity(
        ACTIVITY, "capped", engine.strategy.id, NOW - timedelta(days=1), NOW + timedelta(days=1),
        state=ActivityState.RUNNING, caps=caps,
    )  # fmt: skip
    return Attempt(Draw(user, ACTIVITY), activity, engine, None, stock, SeededRandomSource(1),
                   NOW, slots)  # fmt: skip


async def test_once_the_winners_cap_is_reached_no_stock_is_taken() -> None:
    engine = DrawEngine(strategy({2: "1"}, stock={2: 10}), awards(2))
    stock, slots = counters({7: {2: 10}}), counters({ACTIVITY: {Cap.WINNERS: 1}})
    a = attempt(engine, Caps(winners=1), stock, slots)
    first, second = await take_prize(a, 1), await take_prize(a, 2)
    assert (first.outcome.award_id, first.caps) == (2, (Cap.WINNERS,))
    assert (second.outcome.award_id, second.outcome.rule, second.caps) == (FALLBACK, CAPPED, ())
    assert await stock.left(7, 2) == 9  # the capped draw took none


@pytest.mark.parametrize(
    ("mode", "award", "held"),
    [(Exhaustion.REDISTRIBUTE, 3, (Cap.WINNERS,)), (Exhaustion.FALLBACK, FALLBACK, ())],
)
async def test_a_redraw_keeps_the_winners_slot_and_a_fallback_gives_it_back(
    mode: Exhaustion, award: int, held: tuple[Cap, ...]
) -> None:
    # Prize 2, nearly always picked first, has run out in the counter (not yet known to the
    # engine): its winner's slot is taken, then its stock is not there.
    rates = {2: "0.999999", 3: "0.000001"}
    engine = DrawEngine(strategy(rates, stock={2: 5, 3: 5}, exhaustion=mode), awards(2, 3))
    stock, slots = counters({7: {2: 0, 3: 5}}), counters({ACTIVITY: {Cap.WINNERS: 2}})
    drawn = await take_prize(attempt(engine, Caps(winners=2), stock, slots), 1)
    assert (drawn.outcome.award_id, drawn.caps) == (award, held)
    assert await slots.left(ACTIVITY, Cap.WINNERS) == 2 - len(held)  # one slot at most


async def test_a_draw_given_back_returns_both_slots_and_its_stock() -> None:
    engine = DrawEngine(strategy({2: "1"}, stock={2: 3}), awards(2))
    stock = counters({7: {2: 3}})
    slots = counters({ACTIVITY: {Cap.WINNERS: 1, Cap.PARTICIPANTS: 1}})
    a = attempt(engine, Caps(winners=1, participants=1), stock, slots)
    drawn = await take_prize(a, 1)
    assert set(drawn.caps) == {Cap.WINNERS, Cap.PARTICIPANTS}
    await give_back_prize(a, drawn)
    assert [await slots.left(ACTIVITY, c) for c in Cap] == [1, 1]
    assert await stock.left(7, 2) == 3
    await take_prize(a, 1)  # the place taken again
    with pytest.raises(ActivityFull):
        await take_prize(attempt(engine, Caps(winners=1, participants=1), stock, slots, "v"), 1)
    assert await stock.left(7, 2) == 2  # the refused newcomer took no stock
