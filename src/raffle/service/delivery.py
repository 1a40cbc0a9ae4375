"""Delivering wins: an `award.won` message in, the award's effect out, exactly once."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from raffle.domain.awards import Award, AwardKind
from raffle.domain.delivery import WON, Grant, NotDeliverable, NotFailed, UnknownWin
from raffle.domain.draws import DeliveryError, OutboxMessage, Win, WinState
from raffle.domain.errors import RaffleError
from raffle.domain.flash_sales import SOLD_CHANCES
from raffle.service import ids
from raffle.service.audit import record
from raffle.service.deliverers import (
    DELIVERERS,
    Deliverer,
    DeliveryContext,
    Effect,
    Together,
    crediting_of,
    together_of,
)
from raffle.service.ports import Shards, ShardUnitOfWork

log = logging.getLogger(__name__)

Fault = Callable[[str], Awaitable[None]]  # a test seam: raises at a named point

DELIVERED = "delivered"  # a delivery attempt's result when it did not fail
UNKNOWN_KIND = "unknown"  # the kind of a message that names no award


async def no_fault(point: str) -> None:
    return None


async def deliver(
    message: OutboxMessage,
    ctx: DeliveryContext,
    *,
    deliverers: Mapping[AwardKind, Deliverer] = DELIVERERS,
    fault: Fault = no_fault,
) -> bool:
    """Deliver the win an `award.won` message names; False when it was delivered (or
    failed) before, which makes a redelivered message harmless.

    One transaction on the user's shard moves the record create -> completed (locking it,
    so a concurrent redelivery waits and then finds it completed), records the delivery
    under the order id's unique key, and writes the kind's effect.
    """
    grant, effect = await _prepare(message, ctx, deliverers)
    async with crediting_of([effect], ctx), ctx.shards.for_user(grant.user_id) as uow:
        delivered = await _record(uow, grant, effect, ctx.clock.now())
        await fault("delivery.before_commit")
        await uow.commit()
    return delivered


async def deliver_together(
    messages: Sequence[OutboxMessage],
    ctx: DeliveryContext,
    *,
    deliverers: Mapping[AwardKind, Deliverer] = DELIVERERS,
    fault: Fault = no_fault,
) -> list[Exception | None]:
    """`deliver` for many messages, one transaction per shard instead of one per message;
    per message, None or why it failed. A transaction that fails is undone whole and its
    messages are then delivered one by one, so one bad message never holds back the rest.
    Each message is one attempt in `ctx.metrics`."""
    outcomes: list[Exception | None] = [None] * len(messages)
    kinds = [UNKNOWN_KIND] * len(messages)
    groups: dict[int, list[tuple[int, Grant, Effect]]] = {}
    for i, message in enumerate(messages):
        try:
            grant, effect = await _prepare(message, ctx, deliverers)
        except Exception as error:
            outcomes[i] = error
            continue
        kinds[i] = grant.award.kind.value
        groups.setdefault(ctx.shards.index(grant.user_id), []).append((i, grant, effect))

    async def shard(group: list[tuple[int, Grant, Effect]]) -> None:
        # One order of locking for every batch: two batches on a shard never deadlock.
        group.sort(key=lambda item: (item[1].user_id, item[1].order_id))
        try:
            async with (
                crediting_of([effect for _, _, effect in group], ctx),
                ctx.shards.for_user(group[0][1].user_id) as uow,
            ):
                unknown = await _record_many(uow, group, ctx.clock.now())
                await fault("delivery.before_commit")
                await uow.commit()
            for i in unknown:
                outcomes[i] = UnknownWin(f"no award record for {messages[i].key}")
        except Exception:
            for i, _, _ in group:
                try:
                    await deliver(messages[i], ctx, deliverers=deliverers, fault=fault)
                except Exception as error:
                    outcomes[i] = error

    # The shards at once: their transactions touch no common row, and a batch then takes
    # about as long as its slowest shard instead of the sum of them all.
    await asyncio.gather(*(shard(group) for group in groups.values()))
    for message, outcome, kind in zip(messages, outcomes, kinds, strict=True):
        if outcome is None:
            ctx.metrics.delivered(kind, DELIVERED)
        else:
            ctx.metrics.delivered(kind, delivery_error(outcome).code)
            await note_failure(message, outcome, ctx.shards)
    return outcomes


async def note_failure(message: OutboxMessage, error: Exception, shards: Shards) -> None:
    """Keep on the award record why this attempt failed, in a transaction of its own (the
    attempt's was undone), so the dead-letter step and operators know the last reason.
    A record that cannot be named or reached keeps what it had: the retry still happens."""
    try:
        won = json.loads(message.payload)
        order_id, user_id = str(won["order_id"]), str(won["user_id"])
    except (ValueError, KeyError, TypeError):
        return
    try:
        async with shards.for_user(user_id) as uow:
            await uow.wins.note_error(order_id, delivery_error(error))
            await uow.commit()
    except Exception as lost:  # the same outage, most likely: the attempt logged it already
        log.warning("could not keep why delivery of %s failed: %r", order_id, lost)


def delivery_error(error: Exception) -> DeliveryError:
    """A RaffleError's stable code and message; anything else is `internal`, named by its
    type (an operator's clue, not a caller's contract)."""
    if isinstance(error, RaffleError):
        return DeliveryError(error.code, error.message)
    return DeliveryError("internal", f"{type(error).__name__}: {error}")


async def _record_many(
    uow: ShardUnitOfWork, group: list[tuple[int, Grant, Effect]], now: datetime
) -> list[int]:
    """`_record` for a shard's batch in a few statements; the positions of unknown orders."""
    ids = [grant.order_id for _, grant, _ in group]
    settled = await uow.wins.settle_many(ids, WinState.CREATE, WinState.COMPLETED)
    unsettled = [order_id for order_id in ids if order_id not in settled]
    present = await uow.wins.present(unsettled) if unsettled else set()
    grants = [grant for _, grant, _ in group if grant.order_id in settled]
    fresh = await uow.deliveries.add_many(grants, now) if grants else set()
    together: dict[Together, list[Effect]] = {}
    for _, grant, effect in group:
        if grant.order_id in fresh:
            fresh.discard(grant.order_id)  # a message twice in one batch: one effect
            writes = together_of(effect)
            if writes is None:
                await effect(uow)
            else:
                together.setdefault(writes, []).append(effect)
    # After the others, kind by kind in a fixed order: every batch locks rows in one order.
    for writes in sorted(together, key=lambda w: w.__qualname__):
        await writes(uow, together[writes])
    return [i for i, grant, _ in group if grant.order_id not in settled | present]


async def _prepare(
    message: OutboxMessage, ctx: DeliveryContext, deliverers: Mapping[AwardKind, Deliverer]
) -> tuple[Grant, Effect]:
    grant = await _grant(message, ctx)
    deliverer = deliverers.get(grant.award.kind)
    if deliverer is None:
        raise NotDeliverable(f"no deliverer is wired for {grant.award.kind.value} awards")
    return grant, await deliverer(grant, ctx)


async def _record(uow: ShardUnitOfWork, grant: Grant, effect: Effect, now: datetime) -> bool:
    if not await uow.wins.settle(grant.order_id, WinState.CREATE, WinState.COMPLETED):
        if await uow.wins.get(grant.order_id) is None:
            raise UnknownWin(f"no award record for order {grant.order_id}")
        return False
    # The unique key on the order id: an effect row already there means the effect was
    # written before, so the record is only completed.
    delivered = await uow.deliveries.add(grant, now)
    if delivered:
        await effect(uow)
    return delivered


async def give_up(message: OutboxMessage, shards: Shards) -> bool:
    """A message that reached the dead-letter queue: mark its award record failed, for
    operators to see and send again. False when the record was not waiting (delivered)."""
    won = json.loads(message.payload)
    async with shards.for_user(won["user_id"]) as uow:
        failed = await uow.wins.settle(won["order_id"], WinState.CREATE, WinState.FAILED)
        await uow.commit()
    return failed


async def failed_deliveries(
    shards: Shards, limit: int = 100, activity_id: int | None = None
) -> list[Win]:
    """Award records whose delivery failed (in one activity if given), oldest first, over
    every shard."""
    found: list[Win] = []
    for uow in shards.every():
        async with uow:
            found += await uow.wins.in_state(WinState.FAILED, limit, activity_id)
    return sorted(found, key=lambda w: w.created_at)[:limit]


async def resend(order_id: str, shards: Shards, now: datetime, *, by: str | None = None) -> Win:
    """Send a failed delivery again: the record goes back to create and a new `award.won`
    message is written beside it, in one transaction; the relay does the rest. `by`: the
    operator, for the audit log."""
    for uow in shards.every():  # an operator's rare call: the order id does not name a shard
        async with uow:
            win = await uow.wins.get(order_id)
            if win is None:
                continue
            if not await uow.wins.settle(order_id, WinState.FAILED, WinState.CREATE):
                raise NotFailed(f"the delivery of order {order_id} is {win.state.value}")
            await uow.outbox.add(won_message(win, now))
            details = {"user_id": win.user_id, "award_id": win.award_id}
            await record(uow.audit, "delivery.resend", order_id, now, actor=by, details=details)
            await uow.commit()
            return replace(win, state=WinState.CREATE)
    raise UnknownWin(f"no award record for order {order_id}")


def won_message(win: Win, now: datetime) -> OutboxMessage:
    """The `award.won` message of a win (the draw writes the same payload)."""
    payload = {
        "order_id": win.order_id,
        "user_id": win.user_id,
        "activity_id": win.activity_id,
        "strategy_id": win.strategy_id,
        "award_id": win.award_id,
        "points": win.points,
        "created_at": win.created_at.isoformat(),
        "rule": win.rule,
    }
    return OutboxMessage(ids.message_id(), WON, win.order_id, json.dumps(payload), now)


@dataclass(frozen=True, slots=True)
class DeliveryCounts:
    """Award records by state against delivered effects, over every shard."""

    records: int
    created: int
    completed: int
    failed: int
    delivered: int  # effect rows: equal to `completed` when nothing went wrong
    unpublished: int  # outbox messages not yet published, older than the age asked for


async def delivery_counts(shards: Shards, unpublished_before: datetime) -> DeliveryCounts:
    states: dict[WinState, int] = dict.fromkeys(WinState, 0)
    delivered = unpublished = 0
    for uow in shards.every():
        async with uow:
            for state, n in (await uow.wins.states()).items():
                states[state] += n
            delivered += await uow.deliveries.count()
            unpublished += await uow.outbox.unpublished(unpublished_before)
    return DeliveryCounts(
        records=sum(states.values()),
        created=states[WinState.CREATE],
        completed=states[WinState.COMPLETED],
        failed=states[WinState.FAILED],
        delivered=delivered,
        unpublished=unpublished,
    )


async def _grant(message: OutboxMessage, ctx: DeliveryContext) -> Grant:
    try:
        won = json.loads(message.payload)
        award_id = int(won["award_id"])
        grant_fields = (str(won["order_id"]), str(won["user_id"]), int(won["activity_id"]))
        won_at = datetime.fromisoformat(won["created_at"])
    except (ValueError, KeyError, TypeError) as error:
        raise NotDeliverable(f"message {message.message_id} is malformed: {error!r}") from None
    if won.get("rule") == SOLD_CHANCES:  # a flash sale's SKU: no award names its chances
        award: Award | None = Award(award_id, AwardKind.CHANCES, f"SKU {award_id}", str(award_id))
    else:
        award = (await ctx.catalogue.awards()).get(award_id)
    if award is None:
        raise NotDeliverable(f"award {award_id} does not exist")
    order_id, user_id, activity_id = grant_fields
    return Grant(
        order_id, user_id, activity_id, award, won.get("points"), won_at, message.message_id
    )
