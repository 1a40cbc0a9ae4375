"""Transactions the database dropped to break a deadlock, run again."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from raffle.domain.errors import Contention

T = TypeVar("T")
ATTEMPTS = 5
PAUSE_SECONDS = 0.002  # before the second try, doubling: lets the winner of the lock commit


async def retried(run: Callable[[], Awaitable[T]]) -> T:
    """`run()`, again when the database dropped it as a deadlock victim (it changed nothing).

    Hundreds of requests of one user in flight make MariaDB and PostgreSQL pick victims
    among them; a short, growing pause keeps the retries from meeting the same crowd.
    """
    for attempt in range(ATTEMPTS - 1):
        try:
            return await run()
        except Contention:
            await asyncio.sleep(PAUSE_SECONDS * 2**attempt)
    return await run()
