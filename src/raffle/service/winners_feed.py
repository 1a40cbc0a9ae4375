"""The winners' feed of an activity: its recent wins over every shard, a tie-free page at a time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from raffle.domain.engine import WIN
from raffle.domain.winners_feed import (
    FeedDisplay,
    FeedHidden,
    FeedKey,
    FeedWin,
    InvalidCursor,
    key_of,
    masked,
    newest,
    oldest,
)
from raffle.service.catalogue import Catalogue
from raffle.service.ports import Shards, ShardUnitOfWork


@dataclass(frozen=True, slots=True)
class FeedEntry:
    """A win as anyone may see it. The prize is told by its award: its title now, and its
    level and image where the prize has them."""

    key: FeedKey  # its place in the feed, which names nobody
    winner: str  # masked
    award_id: int
    title: str
    won_at: datetime


@dataclass(frozen=True, slots=True)
class FeedPage:
    display: FeedDisplay
    wins: list[FeedEntry]  # newest first
    next: str | None  # the cursor of the older wins; None: no older ones
    newer: str | None  # the `after` of the wins newer than these; None: ask the first page


async def winners(
    activity_id: int,
    cursor: str | None,
    after: str | None,
    limit: int,
    *,
    catalogue: Catalogue,
    shards: Shards,
) -> FeedPage:
    """The activity's wins older than `cursor` (the newest without one), or the oldest
    `limit` of those newer than `after`; only wins, never the fallback nor "thanks"."""
    if cursor is not None and after is not None:
        raise InvalidCursor("give a cursor or an after, not both")
    activity = await catalogue.activity(activity_id)
    if activity.winners_feed is FeedDisplay.HIDDEN:
        raise FeedHidden(f"activity {activity_id} does not show its winners")
    engine = await catalogue.engine(activity)
    prizes = {p.award_id for p in engine.strategy.prizes if engine.outcome(p.award_id) == WIN}
    token = after if after is not None else cursor
    bound = None if token is None else key_of(token)
    found = await _read(shards, activity_id, prizes, bound, after is not None, limit + 1)
    page = found[:limit] if after is None else found[:limit][::-1]
    awards = await catalogue.awards()
    entries = [FeedEntry(w.key, masked(w.user_id), w.award_id, awards[w.award_id].title,
                         w.won_at) for w in page]  # fmt: skip
    if after is not None:
        newer = page[0].key.token() if page else after
        return FeedPage(activity.winners_feed, entries, None, newer)
    more = found[limit].key.token() if len(found) > limit else None
    return FeedPage(
        activity.winners_feed,
        entries,
        page[-1].key.token() if more else None,
        page[0].key.token() if page else None,
    )


async def _read(
    shards: Shards,
    activity_id: int,
    prizes: set[int],
    bound: FeedKey | None,
    newer: bool,
    limit: int,
) -> list[FeedWin]:
    """The page merged from every shard's own, read side by side: older than `bound` newest
    first, or (`newer`) newer than it oldest first."""

    async def one(shard: int, uow: ShardUnitOfWork) -> list[FeedWin]:
        # (order id, shard) is the key: on the shards before the bound's, its own order
        # id is older still (inclusive); after it, newer still.
        inclusive = bound is not None and (shard > bound.shard if newer else shard < bound.shard)
        async with uow:
            found = await uow.wins.feed(
                activity_id,
                prizes,
                None if bound is None else bound.order_id,
                newer=newer,
                inclusive=inclusive,
                limit=limit,
            )
        return [FeedWin(FeedKey(w.order_id, shard), w.user_id, w.award_id, w.created_at)
                for w in found]  # fmt: skip

    if not prizes:
        return []
    pages = await asyncio.gather(*(one(i, uow) for i, uow in enumerate(shards.every())))
    return oldest(pages, limit) if newer else newest(pages, limit)


class FeedCache:
    """The first page of each activity's feed, kept `ttl` seconds per process: every player
    page polls it, and a page a second or two old is news enough. One read at a time per
    activity and limit; the others wait for it."""

    def __init__(self, ttl: float = 2.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._clock = clock
        self._pages: dict[tuple[int, int], tuple[float, asyncio.Future[FeedPage]]] = {}

    async def first(
        self, activity_id: int, limit: int, read: Callable[[], Awaitable[FeedPage]]
    ) -> FeedPage:
        """The kept page, or the one `read` gives when none is kept or it is too old."""
        key = (activity_id, limit)
        now = self._clock()
        kept = self._pages.get(key)
        if kept is None or kept[0] <= now:
            kept = (now + self._ttl, asyncio.ensure_future(read()))
            self._pages[key] = kept
        try:
            return await asyncio.shield(kept[1])
        except Exception:
            if self._pages.get(key) is kept:
                del self._pages[key]  # a failure is not kept
            raise
