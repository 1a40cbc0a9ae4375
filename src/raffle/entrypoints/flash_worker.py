"""The worker's flash sale parts: the purchases' and payments' consumers and the jobs (loading
sales into the fast stock, expiring unpaid orders, giving strays back)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from functools import partial

from raffle.bootstrap import Raffle
from raffle.domain.flash_sales import PAID, PURCHASED
from raffle.service.flash_payments import settle_paid
from raffle.service.flash_strays import Strays, reconcile
from raffle.service.ports import dead_letters

Loop = Callable[[], Awaitable[None]]
Job = Callable[[Raffle, str, Callable[[], Awaitable[object]]], Awaitable[None]]

TICK_SECONDS = 1.0
PREPARE_EVERY = 5  # ticks: a sale the fast stock lost (a restart) is loaded this soon


def flash_loops(raffle: Raffle, *, consumers: bool, jobs: bool, job: Job) -> list[Loop]:
    flash = raffle.flash
    loops: list[Loop] = []
    if consumers:
        loops.append(lambda: raffle.broker.consume(PURCHASED, flash.handle))
        # A purchase answered "queued" is never dropped: past the delivery limit it waits
        # in its dead-letter queue, tried again there until the database takes it.
        loops.append(lambda: raffle.broker.consume(dead_letters(PURCHASED), flash.handle))
        # An order's payment, applied on the user's shard: the order done, then delivered;
        # never dropped either (the payment is taken).
        paid = partial(settle_paid, sales=flash)
        loops.append(lambda: raffle.broker.consume(PAID, paid))
        loops.append(lambda: raffle.broker.consume(dead_letters(PAID), paid))
    if jobs:
        strays = Strays()

        async def tick() -> None:
            for n in itertools.count():
                if n % PREPARE_EVERY == 0:
                    await job(raffle, "flash_prepare", flash.prepare)
                    await job(raffle, "flash_strays", partial(reconcile, flash, strays))
                await job(raffle, "flash_expiry", flash.expire)
                await asyncio.sleep(TICK_SECONDS)

        loops.append(tick)
    return loops
