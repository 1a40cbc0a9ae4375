"""The door to scheduled draws' seeds, entrants and winners."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from raffle.domain.scheduled import Pick, ScheduledDraw


class ScheduledDraws(Protocol):
    """Scheduled draws in the configuration database (`UnitOfWork.scheduled`)."""

    async def add(self, draw: ScheduledDraw) -> bool:
        """Store a new draw (its seed) unless the activity has one; whether it was stored."""
        ...

    async def get(self, activity_id: int) -> ScheduledDraw | None: ...

    async def held_open(self, activity_id: int) -> ScheduledDraw | None:
        """The draw, read under a shared lock until the transaction ends: `close` waits for
        the entries in flight, and no entry commits after it."""
        ...

    async def close(self, activity_id: int, at: datetime) -> bool:
        """Take no more entries from `at` (frozen_at), once: whether this call did."""
        ...

    async def enter(self, activity_id: int, user_id: str, at: datetime) -> datetime:
        """Add the entrant unless entered; when they entered (the first time)."""
        ...

    async def entered(self, activity_id: int, user_id: str) -> datetime | None: ...

    async def entrants(self, activity_id: int, after: str | None, limit: int) -> list[str]:
        """Up to `limit` entrant ids after `after` (from the first if None), ascending by
        their bytes."""
        ...

    async def entrant_at(self, activity_id: int, after: str | None, offset: int) -> str | None:
        """The entrant `offset` places after the first one after `after` (the first one if
        None), ascending by bytes; None past the last."""
        ...

    async def freeze(self, activity_id: int, entrants: int, digest: str) -> bool:
        """Record the closed list's size and hash, once: whether this call did."""
        ...

    async def drawn(
        self,
        activity_id: int,
        picks: Sequence[tuple[Pick, str]],
        skipped: Sequence[str],
        at: datetime,
    ) -> bool:
        """Record the winners (each with its order id) and the skipped entrants, and reveal
        the seed, once: whether this call did."""
        ...

    async def winners(self, activity_id: int) -> list[tuple[Pick, str, bool]]:
        """The winners in the order picked: each with its order id and whether its win is
        recorded in the winner's shard."""
        ...

    async def won(self, activity_id: int, user_id: str) -> list[tuple[Pick, str]]:
        """What the user won in the draw, with the order ids."""
        ...

    async def recorded(self, activity_id: int, order_ids: Sequence[str]) -> None:
        """Mark these winners' wins recorded in their shards."""
        ...

    async def unrecorded(self, activity_id: int, limit: int) -> list[tuple[Pick, str]]:
        """Up to `limit` winners whose win is not recorded in their shard yet."""
        ...
