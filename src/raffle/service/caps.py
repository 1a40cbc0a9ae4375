"""Activity-wide caps in the draw: a new participant's slot and a winner's slot, taken from
the activity's cap counters like prize stock, and given back when the draw does not commit."""

from __future__ import annotations

import contextlib
from collections.abc import Collection

from raffle.domain.caps import CAPPED, ActivityFull, Cap
from raffle.domain.engine import WIN, Outcome
from raffle.domain.randomness import RandomSource
from raffle.service.ports import Attempt, PrizeStock

Held = tuple[Cap, ...]  # the cap slots a draw holds until it commits


async def admit(attempt: Attempt, draw_count: int, order_id: str) -> Held:
    """A participant's slot for the user's first draw in an activity with a participants
    cap; ActivityFull when none is left. Later draws of a user already in take none."""
    if attempt.activity.caps.participants is None or draw_count != 1:
        return ()
    if not await _counters(attempt).take(attempt.activity.id, int(Cap.PARTICIPANTS), order_id):
        raise ActivityFull(f"activity {attempt.activity.id} has all the participants it takes")
    return (Cap.PARTICIPANTS,)


async def within_caps(
    attempt: Attempt, outcome: Outcome, order_id: str, held: Held, rng: RandomSource
) -> tuple[Outcome, Held]:
    """The outcome within the winners cap, before its stock is taken: a real prize takes a
    winner's slot (kept if the draw held one already), or the fallback replaces it (rule
    `cap`, drawn from the draw's `rng`); an outcome that is no win gives back a slot the
    draw held. So once the cap is reached a draw costs one look at the counter, and no
    stock is taken to be given back."""
    activity = attempt.activity
    if activity.caps.winners is None:
        return outcome, held
    if attempt.engine.outcome(outcome.award_id) != WIN:
        if Cap.WINNERS in held:  # its prize ran out, and the draw fell back
            await release(attempt, order_id, (Cap.WINNERS,))
            held = tuple(cap for cap in held if cap is not Cap.WINNERS)
        return outcome, held
    if Cap.WINNERS in held:
        return outcome, held
    if await _counters(attempt).take(activity.id, int(Cap.WINNERS), order_id):
        return outcome, (*held, Cap.WINNERS)
    return attempt.engine.fallback(rng, CAPPED), held


async def release(attempt: Attempt, order_id: str, held: Collection[Cap]) -> None:
    """The cap slots of a draw that did not commit, given back. Best effort, as stock: a
    slot that cannot be shows as leaked in the caps' reconciliation."""
    for cap in held:
        with contextlib.suppress(Exception):
            await _counters(attempt).give_back(attempt.activity.id, int(cap), order_id)


def _counters(attempt: Attempt) -> PrizeStock:
    # Caps go to the counters as plain ints: the Redis client takes no int subclass.
    if attempt.caps is None:
        raise RuntimeError(f"activity {attempt.activity.id} has caps but no cap counters")
    return attempt.caps
