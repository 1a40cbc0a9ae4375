"""Profiles as the draw and the router read them: this process's copies, forgotten on news."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection

from raffle.domain.profiles import Profile
from raffle.service.news import forget_on_news, tell_ids
from raffle.service.ports import IdNews

Read = Callable[[str], Awaitable[Profile | None]]  # the stored profile, from the database


class CachedProfiles:
    """The `Profiles` port: up to `size` profiles kept in this process, most recently read
    last, each for at most `ttl` seconds. A change anywhere is announced (`changed`) and
    every process that hears it (`watch`) forgets its copies; `ttl` bounds how long a copy
    outlives news that never came. A user without a stored profile is kept as an empty one.
    Reads of one user at once share one database read.
    """

    def __init__(
        self,
        read: Read,
        news: IdNews,
        *,
        ttl: float,
        size: int = 100_000,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._read, self.news = read, news
        self._ttl, self._size, self._monotonic = ttl, size, monotonic
        self._kept: OrderedDict[str, tuple[float, Profile]] = OrderedDict()
        # Moves on with every piece of news: a database read that started before the news
        # may have read the old profile, and is then not kept.
        self._generation = 0
        self._reading: dict[str, asyncio.Future[Profile]] = {}

    async def of(self, user_id: str) -> Profile:
        if (kept := self._kept.get(user_id)) is not None and kept[0] > self._monotonic():
            self._kept.move_to_end(user_id)
            return kept[1]
        if (reading := self._reading.get(user_id)) is None:
            reading = self._reading[user_id] = asyncio.ensure_future(self._load(user_id))
            reading.add_done_callback(lambda done: self._done_reading(user_id, done))
        return await asyncio.shield(reading)  # a caller cancelled leaves the read to others

    def _done_reading(self, user_id: str, done: asyncio.Future[Profile]) -> None:
        if self._reading.get(user_id) is done:
            del self._reading[user_id]
        if not done.cancelled():
            done.exception()  # retrieved: every waiter may have gone

    async def _load(self, user_id: str) -> Profile:
        now = self._monotonic()
        generation = self._generation
        profile = await self._read(user_id) or Profile(user_id)
        if generation == self._generation:
            self._kept[user_id] = (now + self._ttl, profile)
            self._kept.move_to_end(user_id)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return profile

    def forget(self, user_ids: Collection[str] | None = None) -> None:
        """Forget these users' profiles here (None: every profile)."""
        self._generation += 1
        if user_ids is None:
            self._kept.clear()
            self._reading.clear()  # reads under way may be older: later ones start anew
            return
        for user_id in user_ids:
            self._kept.pop(user_id, None)
            self._reading.pop(user_id, None)

    async def changed(self, user_ids: Collection[str] | None) -> None:
        """After a commit that changed these profiles: forgotten here at once, and in the
        other processes when they hear it (best effort: `ttl` bounds a lost message)."""
        self.forget(user_ids)
        await tell_ids(self.news, user_ids)

    async def watch(self) -> None:
        """Forget what the news says changed, until cancelled."""
        await forget_on_news(self.news, self.forget, "profiles")
