"""The doors to participation: the activities' policies and caps, and the users' counters."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Protocol

from raffle.domain.policies import Counts, Participation


class ParticipationRepository(Protocol):
    """Policies and caps in the configuration database (`UnitOfWork.participation`)."""

    async def get(self, activity_id: int) -> Participation:
        """The activity's policies and caps; empty ones (admitting everyone) if it has none."""
        ...

    async def save(self, participation: Participation) -> None:
        """Replace the activity's policies and caps with these."""
        ...


class CounterRepository(Protocol):
    """A user's counters of joins and wins in an activity, on their shard
    (`ShardUnitOfWork.counters`): read and added to in the draw's transaction."""

    async def counts(
        self, user_id: str, activity_id: int, counters: Collection[str]
    ) -> dict[str, Counts]:
        """The joins and wins of the counter rows of `counters` that exist."""
        ...

    async def add(self, user_id: str, activity_id: int, counters: Mapping[str, Counts]) -> None:
        """Add to each counter row of `counters` its joins and wins."""
        ...
