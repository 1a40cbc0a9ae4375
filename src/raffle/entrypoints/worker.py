"""The job runner: the outbox relay, the delivery consumers and the scheduled jobs.

`raffle worker` runs it; `raffle serve` runs its scheduled jobs in every API process, and on
the embedded in-process broker the relay and consumers too. Several runners may work at once:
relays claim rows, consumers are idempotent, the scheduler's moves are compare-and-set.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from raffle.bootstrap import Raffle
from raffle.domain.delivery import WON
from raffle.domain.draws import OutboxMessage
from raffle.entrypoints.batching import Batcher
from raffle.service.activities import advance
from raffle.service.delivery import Fault, deliver_together, give_up, no_fault
from raffle.service.ports import dead_letters
from raffle.service.relay import compensate, relay
from raffle.service.stock_sync import sync_stock

log = logging.getLogger(__name__)

TICK_SECONDS = 1.0
SWEEP_EVERY = 300  # ticks between sweeps of expired sessions and old idempotency keys
KEEP_KEYS = timedelta(days=1)  # how long a retry with the same Idempotency-Key replays
IDLE_SECONDS = 0.2  # the relay's pause when it found nothing to publish
STOCK_SYNC_EVERY = 60  # ticks between runs of the stock-sync job
LEAK_AGE = timedelta(minutes=5)  # a claim without a win this old is no draw in flight


@dataclass(frozen=True, slots=True)
class Parts:
    """Which parts a runner runs."""

    relay: bool = True
    consumers: bool = True
    jobs: bool = True  # activity transitions, sweeps, compensation


async def run(raffle: Raffle, parts: Parts = Parts(), *, fault: Fault = no_fault) -> None:
    """Run until cancelled; a part that fails is logged and started again."""
    loops: list[Callable[[], Awaitable[None]]] = []
    if parts.relay:
        loops.append(lambda: _relay(raffle, fault))
    if parts.consumers:
        loops.append(lambda: raffle.broker.consume(WON, _delivering(raffle, fault)))
        loops.append(lambda: raffle.broker.consume(dead_letters(WON), _giving_up(raffle)))
    if parts.jobs:
        loops.append(lambda: _tick(raffle, compensating=parts.relay, fault=fault))
    async with asyncio.TaskGroup() as group:
        for loop in loops:
            group.create_task(_forever(loop))


async def _forever(loop: Callable[[], Awaitable[None]]) -> None:
    while True:
        try:
            await loop()
        except Exception:
            log.exception("a worker part failed; starting it again")
            await asyncio.sleep(TICK_SECONDS)


async def _relay(raffle: Raffle, fault: Fault) -> None:
    while True:
        if not await relay(raffle.shards, raffle.broker, raffle.clock, fault=fault):
            await asyncio.sleep(IDLE_SECONDS)


def _delivering(raffle: Raffle, fault: Fault) -> Callable[[OutboxMessage], Awaitable[None]]:
    ctx = raffle.delivery()

    async def together(messages: Sequence[OutboxMessage]) -> list[Exception | None]:
        return await deliver_together(messages, ctx, fault=fault)

    batcher = Batcher(together)

    async def handle(message: OutboxMessage) -> None:
        await batcher.submit(message)
        await fault("consumer.before_ack")

    return handle


def _giving_up(raffle: Raffle) -> Callable[[OutboxMessage], Awaitable[None]]:
    async def handle(message: OutboxMessage) -> None:
        if await give_up(message, raffle.shards):
            log.error("delivery failed for good, record marked failed: %s", message.key)

    return handle


async def _tick(raffle: Raffle, *, compensating: bool, fault: Fault) -> None:
    """Start and close activities on time; now and then sweep what has expired and publish
    again what the relay left behind."""
    age = timedelta(seconds=raffle.settings.republish_after_seconds)
    compensate_every = max(1, int(age.total_seconds() / TICK_SECONDS / 4))
    announced: set[tuple[int, int]] = set()
    for tick in itertools.count():
        try:
            moved = await advance(raffle.uow, raffle.clock.now())
            if moved:
                raffle.catalogue.forget()
                log.info("activities moved: %s", moved)
            if compensating and tick % compensate_every == 0:
                await compensate(raffle.shards, raffle.broker, raffle.clock, age=age, fault=fault)
            if compensating and tick % STOCK_SYNC_EVERY == 0:
                await _sync_stock(raffle, announced)
            if tick % SWEEP_EVERY == 0:
                await raffle.sessions.delete_expired()
                await raffle.idempotency.delete_older(raffle.clock.now() - KEEP_KEYS)
        except Exception:
            log.exception("scheduler tick failed; trying again")
        await asyncio.sleep(TICK_SECONDS)


async def _sync_stock(raffle: Raffle, announced: set[tuple[int, int]]) -> None:
    """Only where claims exist (Redis stock): in memory the award rows are the stock."""
    if raffle.ledger is None:
        return

    async def stock_zero(strategy_id: int, award_id: int) -> None:
        log.warning("stock zero: prize %s of strategy %s is all won", award_id, strategy_id)

    await sync_stock(
        config=raffle.uow,
        catalogue=raffle.catalogue,
        shards=raffle.shards,
        stock=raffle.stock,
        claims=raffle.ledger,
        before=raffle.clock.now() - LEAK_AGE,
        stock_zero=stock_zero,
        announced=announced,
    )
