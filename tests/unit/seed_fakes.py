"""A fake seed repository for use-case tests of verifiable draws."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from raffle.domain.fairness import ServerSeed
from tests.unit.fakes import ConfigStore, FakeUnitOfWork


class FakeSeeds:
    def __init__(
        self, seeds: dict[tuple[int, int], ServerSeed], clients: dict[str, tuple[str, datetime]]
    ) -> None:
        self.seeds, self.clients = seeds, clients

    async def add(self, seed: ServerSeed) -> bool:
        key = (seed.activity_id, seed.period)
        if key in self.seeds:
            return False
        self.seeds[key] = seed
        return True

    def _of(self, activity_id: int) -> list[ServerSeed]:
        return sorted(
            (s for s in self.seeds.values() if s.activity_id == activity_id), key=lambda s: s.period
        )

    async def upcoming(self, activity_id: int, now: datetime) -> Sequence[ServerSeed]:
        return [s for s in self._of(activity_id) if s.ends_at > now]

    async def last(self, activity_id: int) -> ServerSeed | None:
        found = self._of(activity_id)
        return found[-1] if found else None

    async def get(self, activity_id: int, period: int) -> ServerSeed | None:
        return self.seeds.get((activity_id, period))

    async def by_commitment(self, commitment: str) -> ServerSeed | None:
        return next((s for s in self.seeds.values() if s.commitment == commitment), None)

    async def revealed(self, activity_id: int, now: datetime, limit: int) -> Sequence[ServerSeed]:
        return [s for s in reversed(self._of(activity_id)) if s.ends_at <= now][:limit]

    async def end(
        self, activity_id: int, period: int, at: datetime, next_ends_at: datetime
    ) -> bool:
        seed = self.seeds.get((activity_id, period))
        if seed is None or seed.ends_at <= at:
            return False
        self.seeds[(activity_id, period)] = replace(seed, ends_at=at)
        if (nxt := self.seeds.get((activity_id, period + 1))) is not None:
            self.seeds[(activity_id, period + 1)] = replace(nxt, starts_at=at, ends_at=next_ends_at)
        return True

    async def client_seeds(self, since: datetime | None) -> Sequence[tuple[str, str, datetime]]:
        return [(u, s, at) for u, (s, at) in self.clients.items() if since is None or at > since]

    async def set_client_seed(self, user_id: str, seed: str, at: datetime) -> None:
        self.clients[user_id] = (seed, at)


class SeededUnitOfWork(FakeUnitOfWork):
    """The fake configuration unit of work, with seeds kept across its transactions."""

    def __init__(self, store: ConfigStore, seeds: FakeSeeds) -> None:
        self._seeds = seeds
        super().__init__(store)

    def _bind(self) -> None:
        super()._bind()
        self.seeds = self._seeds
