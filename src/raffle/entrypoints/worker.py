"""The job runner: the outbox relay, the delivery consumers and the scheduled jobs.

`raffle worker` runs it; `raffle serve` runs its scheduled jobs in every API process, and on
the embedded in-process broker the relay and consumers too. Several runners may work at once:
relays claim rows, consumers are idempotent, the scheduler's moves are compare-and-set.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

import structlog

from raffle.bootstrap import Raffle
from raffle.domain.delivery import WON
from raffle.domain.draws import OutboxMessage
from raffle.domain.tickets import QUEUED
from raffle.entrypoints.batching import Batcher
from raffle.entrypoints.flash_worker import flash_loops
from raffle.entrypoints.payment_worker import payment_loops
from raffle.service.activities import advance
from raffle.service.delivery import Fault, deliver_together, give_up, no_fault
from raffle.service.ports import Draw, DrawResult, dead_letters
from raffle.service.prize_claims import Swept, expire_prizes
from raffle.service.queued_drawing import TicketDrawer
from raffle.service.queued_draws import republish, sweep_tickets
from raffle.service.relay import compensate, relay
from raffle.service.scheduled import Scheduler
from raffle.service.stock_sync import sync_caps, sync_stock
from raffle.service.stopping import stop_if_asked

log = structlog.get_logger()

TICK_SECONDS = 1.0
SWEEP_EVERY = 300  # ticks between sweeps of expired sessions and old idempotency keys
KEEP_KEYS = timedelta(days=1)  # how long a retry with the same Idempotency-Key replays
IDLE_SECONDS = 0.2  # the relay's pause when it found nothing to publish
STOCK_SYNC_EVERY = 60  # ticks between runs of the stock-sync job
EXPIRY_EVERY = 60  # ticks between runs of the prize-expiry job
LEAK_AGE = timedelta(minutes=5)  # a claim without a win this old is no draw in flight
TICKET_SWEEP_BATCH = 1000  # settled tickets deleted per transaction


@dataclass(frozen=True, slots=True)
class Parts:
    """Which parts a runner runs."""

    relay: bool = True
    consumers: bool = True
    jobs: bool = True  # activity transitions, scheduled draws, sweeps, compensation


async def run(raffle: Raffle, parts: Parts = Parts(), *, fault: Fault = no_fault) -> None:
    """Run until cancelled; a part that fails is logged and started again."""
    loops: list[Callable[[], Awaitable[None]]] = []
    if parts.relay:
        loops.append(lambda: _relay(raffle, fault))
    if parts.consumers:
        loops.append(lambda: raffle.broker.consume(WON, _delivering(raffle, fault)))
        loops.append(lambda: raffle.broker.consume(dead_letters(WON), _giving_up(raffle)))
        loops.append(lambda: raffle.broker.consume(QUEUED, _drawing_tickets(raffle, fault)))
    if parts.jobs:
        loops.append(lambda: _tick(raffle, compensating=parts.relay, fault=fault))
    loops += payment_loops(
        raffle, consumers=parts.consumers, jobs=parts.jobs, fault=fault, job=_job
    )
    loops += flash_loops(raffle, consumers=parts.consumers, jobs=parts.jobs, job=_job)
    async with asyncio.TaskGroup() as group:
        for loop in loops:
            group.create_task(_forever(loop))


async def _forever(loop: Callable[[], Awaitable[None]]) -> None:
    while True:
        try:
            await loop()
        except Exception:
            stop_if_asked()
            log.exception("a worker part failed; starting it again")
            await asyncio.sleep(TICK_SECONDS)


async def _relay(raffle: Raffle, fault: Fault) -> None:
    while True:
        started = time.perf_counter()
        published = await relay(
            raffle.shards, raffle.broker, raffle.clock, fault=fault, metrics=raffle.metrics
        )
        if published:
            log.info("relay", published=published, duration_ms=_ms_since(started))
        else:
            await asyncio.sleep(IDLE_SECONDS)


def _delivering(raffle: Raffle, fault: Fault) -> Callable[[OutboxMessage], Awaitable[None]]:
    ctx = raffle.delivery()

    async def together(messages: Sequence[OutboxMessage]) -> list[Exception | None]:
        started = time.perf_counter()
        outcomes = await deliver_together(messages, ctx, fault=fault)
        failed = sum(outcome is not None for outcome in outcomes)
        log.info(
            "delivery",
            delivered=len(outcomes) - failed,
            failed=failed,
            duration_ms=_ms_since(started),
        )
        return outcomes

    batcher = Batcher(together)

    async def handle(message: OutboxMessage) -> None:
        await batcher.submit(message)
        await fault("consumer.before_ack")

    return handle


def _drawing_tickets(raffle: Raffle, fault: Fault) -> Callable[[OutboxMessage], Awaitable[None]]:
    plain = raffle.ticket_drawer()

    async def one(cmd: Draw) -> DrawResult:
        result = await plain.draw(cmd)
        await fault("queued.drawn")  # committed, its ticket not settled yet
        return result

    drawer = TicketDrawer(plain.config, one, plain.batch)

    async def handle(message: OutboxMessage) -> None:
        await drawer.handle(message)
        await fault("consumer.before_ack")

    return handle


def _giving_up(raffle: Raffle) -> Callable[[OutboxMessage], Awaitable[None]]:
    async def handle(message: OutboxMessage) -> None:
        raffle.metrics.dead_lettered()
        if await give_up(message, raffle.shards):
            log.error("delivery failed for good, record marked failed", order_id=message.key)

    return handle


async def _tick(raffle: Raffle, *, compensating: bool, fault: Fault) -> None:
    """Start and close activities on time; now and then sweep what has expired and publish
    again what the relay left behind. Each job run is counted and logged (at debug when it
    found nothing to do, as most ticks do); one that fails does not hold back the others."""
    age = timedelta(seconds=raffle.settings.republish_after_seconds)
    compensate_every = max(1, int(age.total_seconds() / TICK_SECONDS / 4))
    swept: Swept = {}  # the prize-expiry job's progress
    draws = Scheduler(
        raffle.uow, raffle.catalogue, raffle.shards, raffle.clock, raffle.profiles, raffle.tags
    )

    async def advancing() -> list[tuple[int, str]]:
        moved = await advance(raffle.uow, raffle.clock.now())
        if moved:
            raffle.catalogue.forget()
        return moved

    async def compensating_job() -> int:
        return await compensate(
            raffle.shards,
            raffle.broker,
            raffle.clock,
            age=age,
            fault=fault,
            metrics=raffle.metrics,
        )

    async def republishing() -> int:
        return await republish(raffle.uow, raffle.broker, raffle.clock, age=age)

    async def sweeping() -> int:
        expired = await raffle.sessions.delete_expired()
        return expired + await raffle.idempotency.delete_older(raffle.clock.now() - KEEP_KEYS)

    async def sweeping_tickets() -> int:
        keep = timedelta(days=raffle.settings.ticket_retention_days)
        return await sweep_tickets(raffle.uow, raffle.clock, keep=keep, batch=TICKET_SWEEP_BATCH)

    for tick in itertools.count():
        raffle.metrics.measure_pools(raffle.pools())
        await _job(raffle, "advance", advancing)
        await _job(raffle, "scheduled_draws", draws.run)
        if compensating and tick % compensate_every == 0:
            await _job(raffle, "compensate", compensating_job)
            await _job(raffle, "republish_tickets", republishing)
        if compensating and tick % STOCK_SYNC_EVERY == 0:
            await _job(raffle, "stock_sync", lambda: _sync_stock(raffle))
        if tick % SWEEP_EVERY == 0:
            await _job(raffle, "sweep", sweeping)
            await _job(raffle, "ticket_sweep", sweeping_tickets)
        if tick % EXPIRY_EVERY == 0:
            await _job(raffle, "prize_expiry", lambda: _expire_prizes(raffle, swept))
        await asyncio.sleep(TICK_SECONDS)


async def _job(raffle: Raffle, job: str, run: Callable[[], Awaitable[object]]) -> None:
    """One run of a scheduled job: `run` answers what it did (a count, the activities it
    moved), falsy when nothing."""
    started = time.perf_counter()
    try:
        done = await run()
    except Exception:
        stop_if_asked()
        raffle.metrics.job_ran(job, failed=True)
        log.exception("job failed; trying again", job=job, duration_ms=_ms_since(started))
        return
    raffle.metrics.job_ran(job, failed=False)
    (log.info if done else log.debug)("job", job=job, done=done, duration_ms=_ms_since(started))


async def _expire_prizes(raffle: Raffle, swept: Swept) -> int:
    return await expire_prizes(
        config=raffle.uow, catalogue=raffle.catalogue, shards=raffle.shards, clock=raffle.clock,
        swept=swept,
    )  # fmt: skip


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


async def _sync_stock(raffle: Raffle) -> int:
    """Only where claims exist (Redis stock): in memory the award rows are the stock. The
    units given back."""
    if raffle.ledger is None:
        return 0

    before = raffle.clock.now() - LEAK_AGE
    given_back = await sync_stock(
        config=raffle.uow,
        catalogue=raffle.catalogue,
        shards=raffle.shards,
        stock=raffle.stock,
        claims=raffle.ledger,
        before=before,
    )
    if raffle.caps is not None and raffle.cap_ledger is not None:
        given_back += await sync_caps(
            config=raffle.uow, shards=raffle.shards, caps=raffle.caps,
            claims=raffle.cap_ledger, before=before,
        )  # fmt: skip
    return given_back
