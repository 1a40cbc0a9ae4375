"""Runtime switches: where they are stored and audited, and how processes hear of a change."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from datetime import datetime
from typing import Protocol

from raffle.domain.switches import SwitchChange


class SwitchStore(Protocol):
    """The switches set and every change to them, in the configuration database."""

    async def version(self) -> int:
        """A number every change moves on: cheap to read, for polling."""
        ...

    async def load(self) -> tuple[int, Mapping[str, str]]:
        """The version and the switches set, by name. The version is read first: values
        newer than it are seen again at the next version, never older ones kept."""
        ...

    async def change(
        self, name: str, value: str, default: str, actor: str, at: datetime
    ) -> SwitchChange | None:
        """Set switch `name` to `value` and audit it, in one transaction; changes take turns.
        None (and nothing written) if it already had that value (`default` if not set)."""
        ...

    async def audit(self, limit: int) -> list[SwitchChange]:
        """The latest changes, newest first."""
        ...


class SwitchNews(Protocol):
    """How every process learns that the switches changed."""

    async def announce(self, version: int) -> None:
        """Tell every process the switches are at `version` now (best effort: processes
        also look for themselves now and then)."""
        ...

    def changes(self) -> AsyncIterator[None]:
        """Yields whenever the switches may have changed (and once at first), until
        cancelled."""
        ...
