"""A process's snapshot kept fresh: refreshed on each piece of news, or by looking without;
and a process's copies forgotten on the news of what they copy (IdNews)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Collection

from raffle.service.ports.runtime import IdNews
from raffle.service.ports.switches import SwitchNews
from raffle.service.stopping import stop_if_asked

log = logging.getLogger(__name__)

RETRY_SECONDS = 1.0  # after the news failed, or a look at the store


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


async def forget_on_news(
    news: IdNews,
    forget: Callable[[Collection[str] | None], None],
    what: str,
    hearing: Callable[[bool], None] = lambda _: None,
) -> None:
    """Forget what each piece of news names (None: everything), until cancelled; `hearing`
    is told when the news is heard (subscribed) and when it is not. With the news down,
    whatever was said meanwhile is unknown: everything is forgotten, and it is heard again a
    second later."""
    while True:
        try:
            async for ids in news.changes():
                forget(ids)
                hearing(True)
        except Exception:
            stop_if_asked()
            hearing(False)
            forget(None)
            log.warning("%s: no news, forgetting every copy", what, exc_info=True)
            await asyncio.sleep(RETRY_SECONDS)


async def tell_ids(news: IdNews, ids: Collection[str] | None) -> None:
    """Announce that these ids changed, best effort: a process that misses it keeps its copy
    until the copy's own time runs out."""
    with contextlib.suppress(Exception):
        await news.announce(ids)
