"""The steps of a draw (a chance consumed, the strategy run, stock taken, the result
recorded), and the draw store of the backends without batches: each draw in a transaction
of its own, through the shard's repositories (the unit tests' fakes, other drivers)."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from raffle.domain.activity import Activity
from raffle.domain.delivery import WON
from raffle.domain.draws import OrderState, OutboxMessage, RaffleOrder, Win
from raffle.domain.engine import WIN, Outcome
from raffle.domain.fairness import HmacStream
from raffle.domain.notices import StockNotice
from raffle.domain.policies import PERSON_CAP_RULE, Admission
from raffle.domain.quota import NoChances, QuotaAccount, QuotaPack
from raffle.domain.randomness import RandomSource
from raffle.domain.receipts import CAP, OUT, Proof, Receipt, Trail, issued
from raffle.domain.rules import DrawContext
from raffle.service import ids
from raffle.service.caps import Held, admit, release, within_caps
from raffle.service.contention import retried
from raffle.service.idempotency import KeyReused
from raffle.service.notices import crossings, logged, message, still_owed
from raffle.service.participation import admitted, count_alone, counting, read_alone, reading
from raffle.service.ports import Attempt, Counting, DrawResult, Shards, ShardUnitOfWork
from raffle.service.quotas import welcome_first


class DrawsAlone:
    """Each draw in a transaction of its own on its user's shard (no batched store); run
    again if the database dropped it. Taking the chance first takes the account's row lock,
    which makes one user's concurrent draws (and retries of one Idempotency-Key) take turns."""

    def __init__(self, shards: Shards) -> None:
        self._shards = shards

    async def run(self, attempt: Attempt) -> DrawResult:
        return await retried(lambda: self._draw_and_announce(attempt))

    async def close(self) -> None:
        return None

    def resize(self, size: int) -> None:
        return None  # one draw per transaction, whatever the size

    async def _draw_and_announce(self, attempt: Attempt) -> DrawResult:
        owed: list[StockNotice] = []
        try:
            return await self._draw(attempt, owed)
        finally:
            if owed:  # after the draw's transaction: SQLite has one writer
                await self._announce(attempt, owed)

    async def _announce(self, attempt: Attempt, owed: list[StockNotice]) -> None:
        messages = [message(n, attempt.now) for n in owed]
        try:
            async with self._shards.for_user(attempt.cmd.user_id) as uow:
                for m in messages:
                    await uow.outbox.add(m)
                await uow.commit()
        except Exception:
            for m in messages:
                logged(m)

    async def _draw(self, attempt: Attempt, owed: list[StockNotice]) -> DrawResult:
        cmd, activity = attempt.cmd, attempt.activity
        async with self._shards.for_user(cmd.user_id) as uow:
            account = await _consume(uow, cmd.user_id, activity, attempt.welcome, attempt.now)
            key = cmd.request_key
            if key and (order := await uow.orders.by_request(cmd.user_id, key)) is not None:
                # Leaving without commit gives the chance back.
                return replayed(attempt, order, await uow.wins.get(order.order_id))
            if account is None:
                raise no_chances(attempt)
            admission = None
            if (read := reading(attempt)) is not None:
                # Refused (NotAdmitted): leaving without commit gives the chance back.
                admission = admitted(attempt, await read_alone(uow, attempt, read))
            drawn = await take_prize(attempt, account.draws, admission)
            try:
                order, win, message = records(attempt, drawn)
                await uow.orders.add(order)
                await uow.wins.add(win)
                await uow.outbox.add(message)
                for notice in announcements(attempt, drawn):
                    await uow.outbox.add(notice)
                if (counted := drawn.counting(attempt)) is not None:
                    await count_alone(uow, attempt, counted)
                await uow.commit()
            except BaseException:
                owed += await give_back_prize(attempt, drawn)
                raise
        return drawn.result(attempt)


@dataclass(frozen=True, slots=True)
class Drawn:
    """A draw's prize, its stock taken: what is recorded, and answered."""

    order_id: str
    draw_count: int  # the draws of the user in the activity, this one included
    outcome: Outcome
    caps: Held = ()  # the activity's cap slots it took (service/caps.py)
    admission: Admission | None = None  # by its policies and per-person caps, if it has any
    notices: tuple[StockNotice, ...] = ()  # the thresholds its take of stock crossed
    proof: Proof | None = None  # what its receipt needs beyond the order, if it has one

    def counting(self, attempt: Attempt) -> Counting | None:
        """What the draw adds to its participation counters, and the points it costs."""
        if self.admission is None:
            return None
        return counting(attempt, self.order_id, self.admission, self.outcome.award_id)

    def result(self, attempt: Attempt) -> DrawResult:
        o = self.outcome
        return DrawResult(
            self.order_id, attempt.activity.id, o.award_id, o.points, o.rule, self.draw_count,
            attempt.now, receipt=self.receipt(attempt),
        )  # fmt: skip

    def receipt(self, attempt: Attempt) -> Receipt | None:
        fair = attempt.fairness
        if fair is None or self.proof is None:
            return None
        return issued(
            fair.seed, fair.odds_hash, self.proof, self.order_id, self.draw_count, self.outcome
        )


def no_chances(attempt: Attempt) -> NoChances:
    return NoChances(f"no chances left in activity {attempt.activity.id}")


def replayed(attempt: Attempt, order: RaffleOrder, win: Win | None) -> DrawResult:
    """The first result of the attempt's Idempotency-Key, recorded as `order` and `win`."""
    if order.activity_id != attempt.activity.id:
        raise KeyReused("this Idempotency-Key was used for a draw in another activity")
    assert win is not None, "an order is always written with its win"
    return DrawResult(
        order.order_id, order.activity_id, win.award_id, win.points, win.rule,
        order.draw_count, order.created_at, replayed=True, receipt=_receipt(attempt, order, win),
    )  # fmt: skip


def _receipt(attempt: Attempt, order: RaffleOrder, win: Win) -> Receipt | None:
    """A replayed draw's receipt, if its seed is the one in force (else: by its order id)."""
    fair = attempt.fairness
    if fair is None or order.proof is None:
        return None
    proof = Proof.from_text(order.proof)
    if proof.period != fair.seed.period:
        return None
    outcome = Outcome(win.award_id, win.rule, win.points)
    return issued(fair.seed, fair.odds_hash, proof, order.order_id, order.draw_count, outcome)


async def _consume(
    uow: ShardUnitOfWork, user_id: str, activity: Activity, welcome: QuotaPack | None, now: datetime
) -> QuotaAccount | None:
    day, month = activity.periods(now)
    account = await uow.quotas.consume(user_id, activity.id, day, month)
    if account is None and welcome is not None:
        # A first visit opens the account with the welcome pack; if a concurrent request
        # opened it first, this one still draws from it.
        await welcome_first(uow, user_id, activity, welcome, now)
        account = await uow.quotas.consume(user_id, activity.id, day, month)
    return account


async def take_prize(
    attempt: Attempt, draw_count: int, admission: Admission | None = None
) -> Drawn:
    """The strategy run for the user's `draw_count`th draw, the prize's stock taken, within
    the `admission`'s per-person caps (service/participation.py) and the activity's caps
    (service/caps.py)."""
    engine, stock, fair = attempt.engine, attempt.stock, attempt.fairness
    ctx = DrawContext(attempt.cmd.user_id, draw_count)
    order_id = ids.order_id(attempt.now)
    rng = attempt.rng
    if fair is not None:  # the draw's own stream: its receipt pins every random number
        rng = HmacStream(fair.seed.secret, fair.client_seed, order_id, draw_count)
    held = await admit(attempt, draw_count, order_id)  # the activity's participants cap
    left = None
    exhausted = engine.exhausted  # what the engine knew, for the receipt
    steps: list[tuple[Any, ...]] = []
    try:
        outcome = engine.choose(ctx, rng)
        while True:
            capped = _within_person_caps(attempt, admission, outcome, rng)  # before any slot
            capped, held = await within_caps(attempt, capped, order_id, held, rng)  # winners
            if capped is not outcome:
                steps.append((CAP, capped.rule))
                outcome = capped
            if not engine.needs_stock(outcome):
                break
            if taken := await stock.take(engine.strategy.id, outcome.award_id, order_id):
                left = taken.left
                break
            steps.append(
                (OUT, outcome.award_id, tuple(sorted(engine.exhausted | {outcome.award_id})))
            )
            outcome = engine.on_exhausted(outcome, ctx, rng)
    except BaseException:
        await release(attempt, order_id, held)
        raise
    notices = tuple(crossings(attempt, outcome.award_id, order_id, left))
    proof = None
    if fair is not None:
        trail = Trail(tuple(sorted(exhausted)), tuple(steps))
        listed = engine.lists(attempt.cmd.user_id)
        proof = Proof(fair.seed.period, fair.client_seed, listed, trail)
    return Drawn(order_id, draw_count, outcome, held, admission, notices, proof)


def _within_person_caps(
    attempt: Attempt, admission: Admission | None, outcome: Outcome, rng: RandomSource
) -> Outcome:
    """Participation's per-person caps (wins per period, each prize once): checked before the
    activity's winners cap and the prize's stock, so a capped win takes neither; the
    fallback drawn from the draw's `rng`."""
    engine = attempt.engine
    if admission is None or not admission.capped(
        outcome.award_id, engine.outcome(outcome.award_id) == WIN
    ):
        return outcome
    return engine.fallback(rng, PERSON_CAP_RULE)


async def give_back_prize(attempt: Attempt, drawn: Drawn) -> list[StockNotice]:
    """The stock taken for a draw that did not commit, given back; the crossings of its take
    that stand even so (service/notices.py), for the caller to write once its transaction
    is over.

    Best effort: a unit that cannot be given back shows as leaked in the reconciliation
    report; the draw's own failure is what the caller sees."""
    await release(attempt, drawn.order_id, drawn.caps)
    left = None
    if attempt.engine.needs_stock(drawn.outcome):
        with contextlib.suppress(Exception):
            left = await attempt.stock.give_back(
                attempt.activity.strategy_id, drawn.outcome.award_id, drawn.order_id
            )
    return still_owed(attempt, list(drawn.notices), left)


def announcements(attempt: Attempt, drawn: Drawn) -> list[OutboxMessage]:
    """The outbox messages of the draw's stock notices, written with its win."""
    return [message(n, attempt.now) for n in drawn.notices]


def records(attempt: Attempt, drawn: Drawn) -> tuple[RaffleOrder, Win, OutboxMessage]:
    """The draw's order, its win, and the win's outbox message."""
    cmd, activity, now = attempt.cmd, attempt.activity, attempt.now
    order_id, draw_count, outcome = drawn.order_id, drawn.draw_count, drawn.outcome
    order = RaffleOrder(
        order_id,
        cmd.user_id,
        activity.id,
        activity.strategy_id,
        draw_count,
        OrderState.USED,
        now,
        cmd.request_key,
        drawn.admission.policy.policy_id if drawn.admission and drawn.admission.policy else None,
        None if drawn.proof is None else drawn.proof.to_text(),
    )
    win = Win(
        order_id,
        cmd.user_id,
        activity.id,
        activity.strategy_id,
        outcome.award_id,
        outcome.points,
        outcome.rule,
        now,
    )
    payload = {
        "order_id": order_id,
        "user_id": cmd.user_id,
        "activity_id": activity.id,
        "strategy_id": activity.strategy_id,
        "award_id": outcome.award_id,
        "points": outcome.points,
        "created_at": now.isoformat(),
    }
    return order, win, OutboxMessage(ids.message_id(), WON, order_id, json.dumps(payload), now)
