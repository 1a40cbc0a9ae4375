"""The deny lists as this process holds them: checked from memory, kept fresh by news."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence

from raffle.domain.blocking import BlockRule
from raffle.domain.deny import DenyEntry, DenyList
from raffle.service.audit import deny_added
from raffle.service.news import follow, tell
from raffle.service.ports import Clock, SwitchNews
from raffle.service.ports.deny import DenyStore

log = logging.getLogger(__name__)

# Read everything again this often even when no change was heard: a safety net for news
# lost while the version stayed the same, and what drops expired entries from memory.
RELOAD_SECONDS = 300.0


class DenyBoard:
    """Every entry in force and every blocking rule, read whole when the stored version
    moves on (`watch()` hears of it through the news, as the tags' board does; `refresh()`
    looks at once). `denies` reads no database."""

    def __init__(
        self,
        store: DenyStore,
        news: SwitchNews,
        clock: Clock,
        *,
        reload_seconds: float = RELOAD_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store, self.news, self.clock = store, news, clock
        self.version = -1  # nothing read yet
        self.list = DenyList()
        self.rules: Sequence[BlockRule] = ()
        self._reload_seconds, self._monotonic = reload_seconds, monotonic
        self._loaded_at = 0.0
        self._refreshing = asyncio.Lock()

    def denies(
        self,
        *,
        user: str | None = None,
        phone: str | None = None,
        sn: str | None = None,
        ip: str | None = None,
    ) -> bool:
        """Whether any of these (None: not known) is on a list, in force now."""
        if (until := self.list.valid_until) is not None and (now := self.clock.now()) >= until:
            # An entry expired: the list is built again without it (once per expiry).
            self.list = self.list.at(now)
        return self.list.denies(user=user, phone=phone, sn=sn, ip=ip)

    async def refresh(self) -> None:
        """Read the list again if it moved on since this process read it, or if the last
        read is older than the reload interval."""
        async with self._refreshing:
            stale = self._monotonic() - self._loaded_at >= self._reload_seconds
            if not stale and await self.store.version() == self.version:
                return
            loaded_at = self._monotonic()
            stored = await self.store.load(self.clock.now())
            self.list = DenyList(stored.entries, self.clock.now())
            self.rules = tuple(stored.rules)
            self.version, self._loaded_at = stored.version, loaded_at

    async def changed(self) -> None:
        """After a change committed: read here at once, and announced to the others (best
        effort: they look at the version now and then anyway)."""
        await self.refresh()
        await tell(self.news, self.version)

    async def add(self, entry: DenyEntry) -> DenyEntry:
        stored = await self.store.add(entry, deny_added)
        await self.changed()
        return stored

    async def watch(self) -> None:
        """Refresh on every piece of news, until cancelled."""
        await follow(self.news, self.refresh, "deny lists")
