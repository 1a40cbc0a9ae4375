"""The switches as this process sees them: a snapshot read on every request, kept fresh."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping

from raffle.domain.switches import Switches
from raffle.service.news import follow
from raffle.service.ports import SwitchNews, SwitchStore

log = logging.getLogger(__name__)

Listener = Callable[[Switches, Switches], None]  # (before, after): applies a change here


class SwitchBoard:
    """`current` is the snapshot: requests read it, never the store. `watch()` refreshes it
    whenever the news says the switches may have changed; `refresh()` at once (after this
    process changed one). Listeners apply a change to what keeps its own copy."""

    def __init__(self, store: SwitchStore, news: SwitchNews, limits: Mapping[str, int]) -> None:
        self.store, self.news = store, news
        self._limits = dict(limits)  # the settings': the values of limits no operator set
        self.current = Switches.of(0, {}, self._limits)
        self._listeners: list[Listener] = []
        self._refreshing = asyncio.Lock()

    @property
    def limits(self) -> Mapping[str, int]:
        """The settings' limits: what a limit no operator set is."""
        return self._limits

    def listen(self, listener: Listener) -> None:
        self._listeners.append(listener)

    async def refresh(self) -> Switches:
        """Read the store if the switches moved on since the snapshot."""
        async with self._refreshing:  # one reader at a time: the last read wins, in order
            if await self.store.version() != self.current.version:
                version, values = await self.store.load()
                self._apply(Switches.of(version, values, self._limits))
        return self.current

    async def watch(self) -> None:
        """Refresh on every piece of news, until cancelled."""
        await follow(self.news, self.refresh, "switches")

    def _apply(self, switches: Switches) -> None:
        before, self.current = self.current, switches
        for listener in self._listeners:
            listener(before, switches)
