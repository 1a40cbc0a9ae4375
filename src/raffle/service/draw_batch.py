"""Draws in batches (group commit): the draws of many users on one shard database share one
transaction, and each of its statements carries all of them.

Round trips and per-statement costs dominate a draw, not the work: BEGIN, taking the chance,
recording the result and COMMIT cost about the same for one draw as for sixty. So the draws
that arrive while a batch is in flight go together in the next (GroupCommit): BEGIN; one
statement takes a chance for every draw and looks up their replays; the strategies run and
stock is taken, concurrently across the batch; one statement records every order, win and
outbox message; COMMIT. Each caller then gets its own result or its own error.

A first visit (no account yet) opens its account with the welcome pack in the batch: one
more statement, after the chances are taken, opens the accounts of the batch's first visits
and takes each one's chance from it (a statement cannot see the rows it inserts itself). At a
launch every draw is one.

The rare paths leave the batch for a transaction of their own (drawing.draw_alone), so they
stay as they are: a replay (or a reused key); a first visit whose account another
transaction opened meanwhile (the same user's draw in another process, `my_account`, a
rebate), or whose welcome pack has no chance in one of its limits; and every draw of a batch
that failed (a deadlock, an Idempotency-Key that a twin recorded meanwhile), its stock given
back first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import partial

from raffle.domain.quota import QuotaPack
from raffle.service.drawing import (
    Attempt,
    Drawn,
    DrawResult,
    draw_alone,
    give_back_prize,
    no_chances,
    records,
    take_prize,
)
from raffle.service.group_commit import GroupCommit
from raffle.service.ports import DrawBatch, DrawBatches, Shards

Answer = DrawResult | None  # None: the draw leaves the batch, to run alone


class DrawLanes:
    """The draws waiting and in flight on each lane (shard database) of one set of batches:
    a group commit per lane, made at its first draw. Its owner is the batches themselves
    (`DrawBatches.lanes`, set at their first draw), so the lanes live and go with them."""

    def __init__(self, batches: DrawBatches) -> None:
        self._batches = batches
        self._lanes: dict[int, GroupCommit[Attempt, Answer]] = {}

    def of(self, user_id: str) -> GroupCommit[Attempt, Answer]:
        lane = self._batches.lane(user_id)
        if (group := self._lanes.get(lane)) is None:
            # One draw per user in a batch: one user's draws take turns, as their account row
            # lock makes them do anyway, and no row is written twice by one statement.
            together = partial(_together, self._batches, lane)
            group = self._lanes[lane] = GroupCommit(together, size=self._batches.size, key=_user)
        return group


def lanes_of(batches: DrawBatches) -> DrawLanes:
    """The batches' lanes, made at their first draw."""
    if not isinstance(batches.lanes, DrawLanes):
        batches.lanes = DrawLanes(batches)
    return batches.lanes


async def draw_in_batch(attempt: Attempt, shards: Shards, batches: DrawBatches) -> DrawResult:
    answer = await lanes_of(batches).of(attempt.cmd.user_id).submit(attempt)
    return answer if answer is not None else await draw_alone(attempt, shards)


def _user(attempt: Attempt) -> str:
    return attempt.cmd.user_id


async def _together(
    batches: DrawBatches, lane: int, attempts: Sequence[Attempt]
) -> list[Answer | Exception]:
    drawn: dict[int, Drawn] = {}  # by position in the batch
    try:
        async with batches.begin(lane) as batch:
            answers = await _draw(batch, attempts, drawn)
            await batch.commit()
    except Exception:
        # Nothing of the batch was committed: each draw runs again alone, where the rare
        # causes (a deadlock, a twin's key) have their own answers.
        await asyncio.gather(*(give_back_prize(attempts[n], d) for n, d in drawn.items()))
        return [None] * len(attempts)
    return answers


async def _draw(
    batch: DrawBatch, attempts: Sequence[Attempt], drawn: dict[int, Drawn]
) -> list[Answer | Exception]:
    chances = await batch.consume([attempt.claim() for attempt in attempts])
    answers: list[Answer | Exception] = [None] * len(attempts)
    counts: dict[int, int] = {}  # the draw count of each draw that got a chance
    welcomes: dict[int, QuotaPack] = {}  # first visits, opened in the batch
    for n, (attempt, chance) in enumerate(zip(attempts, chances, strict=True)):
        if chance.replay is not None:
            continue  # alone, to replay
        if not chance.opened and (welcome := attempt.welcome) is not None:
            if welcome.chances > 0:  # else alone: no chance, and nothing opened
                welcomes[n] = welcome
        elif chance.account is None:
            answers[n] = no_chances(attempt)
        else:
            counts[n] = chance.account.draws
    if welcomes:
        # A first visit whose account was opened meanwhile is not in the answer: alone.
        opened = await batch.open_accounts(welcomes)
        counts.update((n, account.draws) for n, account in opened.items())
    prizes = await asyncio.gather(
        *(take_prize(attempts[n], count) for n, count in counts.items()), return_exceptions=True
    )
    for n, prize in zip(counts, prizes, strict=True):
        if isinstance(prize, Drawn):
            drawn[n] = prize
            answers[n] = prize.result(attempts[n])
        elif isinstance(prize, Exception):
            answers[n] = prize  # the stock could not be taken: its chance goes back
        else:
            raise prize
    await batch.give_back([n for n in range(len(attempts)) if n not in drawn])
    await batch.record([records(attempts[n], d) for n, d in drawn.items()])
    return answers
