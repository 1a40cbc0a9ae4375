"""The batched draw store (PostgreSQL, MariaDB, SQLite): the draws of many users on one shard
database share one transaction (group commit), each statement carrying all of them; the rare
cases (a first visit, a replay, a failed batch) stay in the store (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import partial

from raffle.domain.draws import RaffleOrder, Win
from raffle.domain.notices import StockNotice
from raffle.domain.policies import Admission, NotAdmitted, Standing
from raffle.domain.quota import QuotaPack
from raffle.service.contention import retried
from raffle.service.drawing import (
    Drawn,
    announcements,
    give_back_prize,
    no_chances,
    records,
    replayed,
    take_prize,
)
from raffle.service.group_commit import GroupCommit
from raffle.service.idempotency import KeyReused
from raffle.service.notices import logged, message
from raffle.service.participation import admitted, reading
from raffle.service.ports import Attempt, DrawBatch, DrawBatches, DrawResult, Reading

Answer = DrawResult | Exception
AGAIN = None  # the draw goes again, in a batch of its own
NOTHING_READ = Standing({})  # a draw whose policies count nothing and cost nothing


class BatchedDraws:
    """A group commit per lane (shard database) of `batches`, made at its first draw."""

    def __init__(self, batches: DrawBatches) -> None:
        self.batches = batches
        self._lanes: dict[int, GroupCommit[Attempt, DrawResult]] = {}

    async def run(self, attempt: Attempt) -> DrawResult:
        return await self._lane(attempt.cmd.user_id).submit(attempt)

    async def close(self) -> None:
        await self.batches.close()

    def resize(self, size: int) -> None:
        self.batches.size = size
        for group in self._lanes.values():
            group.size = size

    def _lane(self, user_id: str) -> GroupCommit[Attempt, DrawResult]:
        lane = self.batches.lane(user_id)
        if (group := self._lanes.get(lane)) is None:
            # One draw per user in a batch: one user's draws take turns, as their account row
            # lock makes them do anyway, and no row is written twice by one statement.
            together = partial(_together, self.batches, lane)
            group = self._lanes[lane] = GroupCommit(together, size=self.batches.size, key=_user)
        return group


def _user(attempt: Attempt) -> str:
    return attempt.cmd.user_id


async def _together(batches: DrawBatches, lane: int, attempts: Sequence[Attempt]) -> list[Answer]:
    try:
        answers = await _batch(batches, lane, attempts)
    except Exception:
        # Nothing of it was committed: each draw goes again in a batch of its own, so that
        # what failed it (a deadlock, a twin's key) fails one draw at most, and is retried.
        answers = [AGAIN] * len(attempts)
    return [
        await _alone(batches, lane, attempt) if answer is AGAIN else answer
        for attempt, answer in zip(attempts, answers, strict=True)
    ]


async def _alone(batches: DrawBatches, lane: int, attempt: Attempt) -> Answer:
    """The draw in a batch of its own, run again while the database drops it (Contention)
    or its account was opened meanwhile by another transaction (which then committed it)."""
    try:
        while True:
            (answer,) = await retried(lambda: _batch(batches, lane, [attempt]))
            if answer is not AGAIN:
                return answer
    except Exception as error:
        return error


async def _batch(
    batches: DrawBatches, lane: int, attempts: Sequence[Attempt]
) -> list[Answer | None]:
    """One transaction for the draws; their stock given back if it did not commit."""
    drawn: dict[int, Drawn] = {}  # by position in the batch
    try:
        async with batches.begin(lane) as batch:
            answers = await _draw(batch, attempts, drawn)
            await batch.commit()
    except Exception:
        owed = await asyncio.gather(*(give_back_prize(attempts[n], d) for n, d in drawn.items()))
        if any(owed):
            await _announce(batches, lane, attempts, drawn, owed)
        raise
    return answers


async def _announce(
    batches: DrawBatches,
    lane: int,
    attempts: Sequence[Attempt],
    drawn: dict[int, Drawn],
    owed: Sequence[Sequence[StockNotice]],
) -> None:
    """The crossings of draws that did not commit which stand even so, in a transaction of
    their own (best effort: logged if it fails too)."""
    messages = [
        (attempts[n].cmd.user_id, message(notice, attempts[n].now))
        for n, notices in zip(drawn, owed, strict=True)
        for notice in notices
    ]
    try:
        async with batches.begin(lane) as batch:
            await batch.announce(messages)
            await batch.commit()
    except Exception:
        for _, m in messages:
            logged(m)


async def _draw(
    batch: DrawBatch, attempts: Sequence[Attempt], drawn: dict[int, Drawn]
) -> list[Answer | None]:
    # What admitting each draw reads (its activity's policies and caps), known before any
    # chance is taken: a store may read it with the chances.
    reads = {n: r for n, attempt in enumerate(attempts) if (r := reading(attempt)) is not None}
    needed = {n: read for n, read in reads.items() if read.counters or read.balance}
    chances = await batch.consume([attempt.claim() for attempt in attempts], needed)
    answers: list[Answer | None] = [AGAIN] * len(attempts)
    counts: dict[int, int] = {}  # the draw count of each draw that got a chance
    welcomes: dict[int, QuotaPack] = {}  # first visits, opened in the batch
    replays: dict[int, RaffleOrder] = {}
    for n, (attempt, chance) in enumerate(zip(attempts, chances, strict=True)):
        welcome = attempt.welcome
        if chance.replay is not None:
            replays[n] = chance.replay
        elif not chance.opened and welcome is not None and welcome.chances > 0:
            welcomes[n] = welcome
        elif chance.account is None:
            answers[n] = no_chances(attempt)
        else:
            counts[n] = chance.account.draws
    if replays:
        wins = await batch.wins(list(replays.values()))
        for n, order in replays.items():
            answers[n] = _replayed(attempts[n], order, wins)
    if welcomes:
        # A first visit whose account was opened meanwhile is not in the answer: AGAIN.
        opened = await batch.open_accounts(welcomes)
        counts.update((n, account.draws) for n, account in opened.items())
    admissions = await _admit(batch, attempts, reads, counts, answers)
    await _take_prizes(attempts, counts, admissions, answers, drawn)
    await batch.give_back([n for n in range(len(attempts)) if n not in drawn])
    counted = {n: c for n, d in drawn.items() if (c := d.counting(attempts[n])) is not None}
    if counted:
        await batch.count(counted)
    await batch.record([records(attempts[n], d) for n, d in drawn.items()])
    notices = [
        (attempts[n].cmd.user_id, m)
        for n, d in drawn.items()
        for m in announcements(attempts[n], d)
    ]
    if notices:
        await batch.announce(notices)
    return answers


async def _take_prizes(
    attempts: Sequence[Attempt],
    counts: dict[int, int],
    admissions: dict[int, Admission],
    answers: list[Answer | None],
    drawn: dict[int, Drawn],
) -> None:
    prizes = await asyncio.gather(
        *(take_prize(attempts[n], count, admissions.get(n)) for n, count in counts.items()),
        return_exceptions=True,
    )
    for n, prize in zip(counts, prizes, strict=True):
        if isinstance(prize, Drawn):
            drawn[n] = prize
            answers[n] = prize.result(attempts[n])
        elif isinstance(prize, Exception):
            answers[n] = prize  # the stock could not be taken: its chance goes back
        else:
            raise prize


async def _admit(
    batch: DrawBatch,
    attempts: Sequence[Attempt],
    read: dict[int, Reading],
    counts: dict[int, int],
    answers: list[Answer | None],
) -> dict[int, Admission]:
    """The admissions of the draws with a chance whose activity has policies or caps (what
    `read` has); those refused (NotAdmitted) answered, and left out of `counts` (their
    chance goes back)."""
    reads = {n: read[n] for n in counts if n in read}
    if not reads:
        return {}
    needed = {n: r for n, r in reads.items() if r.counters or r.balance}
    standings = await batch.standings(needed) if needed else {}
    admissions: dict[int, Admission] = {}
    for n in reads:
        try:
            admission = admitted(attempts[n], standings.get(n, NOTHING_READ))
        except NotAdmitted as error:
            answers[n] = error
            del counts[n]
        else:
            if admission is not None:
                admissions[n] = admission
    return admissions


def _replayed(attempt: Attempt, order: RaffleOrder, wins: dict[str, Win]) -> Answer:
    try:
        return replayed(attempt, order, wins.get(order.order_id))
    except KeyReused as error:
        return error
