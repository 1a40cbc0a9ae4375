"""The outbox relay: committed outbox messages to the broker, at least once."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from raffle.domain.draws import OutboxMessage
from raffle.service.delivery import Fault, no_fault
from raffle.service.ports import UNMEASURED, Broker, Clock, Metrics, Shards, ShardUnitOfWork

BATCH = 200  # messages claimed per shard per round


async def relay(
    shards: Shards,
    broker: Broker,
    clock: Clock,
    *,
    batch: int = BATCH,
    fault: Fault = no_fault,
    metrics: Metrics = UNMEASURED,
) -> int:
    """One round over every shard: claim new messages (and failed ones whose backoff has
    passed), publish them, record the broker's answers. How many were published."""
    return await _round(shards, broker, clock, batch, None, fault, metrics)


async def compensate(
    shards: Shards,
    broker: Broker,
    clock: Clock,
    *,
    age: timedelta,
    batch: int = BATCH,
    fault: Fault = no_fault,
    metrics: Metrics = UNMEASURED,
) -> int:
    """Publish again what is still not published `age` after its row was last touched: a
    relay died between claiming and marking, or failures outlasted the backoff."""
    stale_before = clock.now() - age
    return await _round(shards, broker, clock, batch, stale_before, fault, metrics)


async def _round(
    shards: Shards,
    broker: Broker,
    clock: Clock,
    batch: int,
    stale_before: datetime | None,
    fault: Fault,
    metrics: Metrics,
) -> int:
    published = 0
    for uow in shards.every():
        published += await _shard(uow, broker, clock, batch, stale_before, fault, metrics)
    return published


async def _shard(
    uow: ShardUnitOfWork,
    broker: Broker,
    clock: Clock,
    batch: int,
    stale_before: datetime | None,
    fault: Fault,
    metrics: Metrics,
) -> int:
    async with uow:
        claimed = await uow.outbox.claim(clock.now(), batch, stale_before)
        await uow.commit()
    if not claimed:
        return 0
    await fault("relay.claimed")
    answers = await broker.publish_many(claimed)
    await fault("relay.published")
    now = clock.now()
    for message, answer in zip(claimed, answers, strict=True):
        if answer is None:
            metrics.published((now - message.created_at).total_seconds())
    ok = _ids(claimed, answers, ok=True)
    failed = _ids(claimed, answers, ok=False)
    async with uow:  # the same shard, a new transaction
        if ok:
            await uow.outbox.mark(ok, True, clock.now())
        if failed:
            await uow.outbox.mark(failed, False, clock.now())
        await uow.commit()
    return len(ok)


def _ids(claimed: list[OutboxMessage], answers: Sequence[object], *, ok: bool) -> list[str]:
    return [m.message_id for m, a in zip(claimed, answers, strict=True) if (a is None) is ok]
