"""The door to the activities' server seeds and the players' client seeds."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from raffle.domain.fairness import ServerSeed


class SeedRepository(Protocol):
    """Server seeds in the configuration database (`UnitOfWork.seeds`)."""

    async def add(self, seed: ServerSeed) -> bool:
        """Store the seed unless its (activity, period) is stored already; whether it was."""
        ...

    async def upcoming(self, activity_id: int, now: datetime) -> Sequence[ServerSeed]:
        """The activity's seeds whose period has not ended at `now`, oldest first."""
        ...

    async def last(self, activity_id: int) -> ServerSeed | None:
        """The activity's seed of the latest period, ended or not."""
        ...

    async def get(self, activity_id: int, period: int) -> ServerSeed | None: ...

    async def by_commitment(self, commitment: str) -> ServerSeed | None:
        """The seed of that commitment, whatever its activity and period."""
        ...

    async def revealed(self, activity_id: int, now: datetime, limit: int) -> Sequence[ServerSeed]:
        """The activity's seeds whose period ended by `now`, newest first."""
        ...

    async def end(
        self, activity_id: int, period: int, at: datetime, next_ends_at: datetime
    ) -> bool:
        """End the period at `at` and start the next one then (ending at `next_ends_at`),
        if the period is still running: a compare-and-set, so one of many rotations wins."""
        ...

    async def client_seeds(self, since: datetime | None) -> Sequence[tuple[str, str, datetime]]:
        """The client seeds players set after `since` (all if None): user, seed, when."""
        ...

    async def set_client_seed(self, user_id: str, seed: str, at: datetime) -> None: ...
