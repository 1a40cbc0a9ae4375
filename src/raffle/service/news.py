"""A process's snapshot kept fresh: refreshed on each piece of news, or by looking without."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from raffle.service.ports.switches import SwitchNews
from raffle.service.stopping import stop_if_asked

log = logging.getLogger(__name__)

RETRY_SECONDS = 1.0  # after a failed look at the store


async def follow(news: SwitchNews, refresh: Callable[[], Awaitable[object]], what: str) -> None:
    """Refresh on every piece of news, until cancelled. With the news or the store down the
    snapshot stays as it is, and the store itself is looked at every second."""
    while True:
        try:
            async for _ in news.changes():
                await refresh()
        except Exception:
            stop_if_asked()
            log.warning("%s: no news, looking again in a second", what, exc_info=True)
            await asyncio.sleep(RETRY_SECONDS)
            with contextlib.suppress(Exception):
                await refresh()


async def tell(news: SwitchNews, version: int) -> None:
    """Announce `version` to every process, best effort: one that misses it sees the change
    at its next look anyway."""
    with contextlib.suppress(Exception):
        await news.announce(version)
