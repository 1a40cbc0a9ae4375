"""The worker's payment parts: the `payment.notified` consumer and the payment jobs (expiry,
refunds left behind, the daily reconciliation)."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog

from raffle.bootstrap import Raffle
from raffle.domain.draws import OutboxMessage
from raffle.domain.payments import NOTIFIED
from raffle.service.delivery import Fault
from raffle.service.payment_jobs import expire, reconcile, refunds
from raffle.service.payment_settling import settle
from raffle.service.ports import dead_letters

log = structlog.get_logger()

Loop = Callable[[], Awaitable[None]]
Job = Callable[[Raffle, str, Callable[[], Awaitable[object]]], Awaitable[None]]

TICK_SECONDS = 1.0
EXPIRE_EVERY = 10  # ticks: an order is closed at most this much after its 30 minutes
REFUND_EVERY = 10
RECONCILE_EVERY_SECONDS = 24 * 3600.0
# A worker restarted more often than daily (a deploy, a rescheduled pod) reconciles anyway.
RECONCILE_FIRST_SECONDS = 600.0


def payment_loops(
    raffle: Raffle, *, consumers: bool, jobs: bool, fault: Fault, job: Job
) -> list[Loop]:
    """The loops to run beside the others, when a payment gateway is configured."""
    if raffle.gateway is None:
        return []
    loops: list[Loop] = []
    if consumers:
        loops.append(lambda: raffle.broker.consume(NOTIFIED, _settling(raffle, fault)))
        loops.append(lambda: raffle.broker.consume(dead_letters(NOTIFIED), _parked))
    if jobs:
        loops.append(lambda: _tick(raffle, fault, job))
    return loops


def _settling(raffle: Raffle, fault: Fault) -> Callable[[OutboxMessage], Awaitable[None]]:
    ctx = raffle.payments(fault)

    async def handle(message: OutboxMessage) -> None:
        state = await settle(message, ctx)
        log.info("payment", trade_no=message.key, state=state)
        await fault("consumer.before_ack")

    return handle


async def _parked(message: OutboxMessage) -> None:
    # The payment stays `received`: the reconciliation lists its order as paid there.
    log.error("a payment could not be applied, given up", trade_no=message.key)


async def _tick(raffle: Raffle, fault: Fault, job: Job) -> None:
    ctx = raffle.payments(fault)

    async def reconciling() -> int:
        found = await reconcile(ctx)
        for mismatch in found.mismatches:
            log.warning(
                "reconciliation", mismatch=mismatch.kind, out_trade_no=mismatch.out_trade_no
            )
        return len(found.mismatches)

    daily = Daily(time.monotonic() + RECONCILE_FIRST_SECONDS)
    for tick in itertools.count():
        if tick % EXPIRE_EVERY == 0:
            await job(raffle, "payment_expiry", lambda: expire(ctx))
        if tick % REFUND_EVERY == 0:
            await job(raffle, "refunds", lambda: refunds(ctx))
        if daily.due(time.monotonic()):
            await job(raffle, "reconcile", reconciling)
        await asyncio.sleep(TICK_SECONDS)


@dataclass
class Daily:
    """When the reconciliation is next due, on the monotonic clock: by time, not by ticks,
    which the jobs' own durations stretch."""

    next_at: float

    def due(self, now: float) -> bool:
        if now < self.next_at:
            return False
        self.next_at = now + RECONCILE_EVERY_SECONDS
        return True
