"""The composition root: the only place that wires adapters to the service layer."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.randomness import SystemRandomSource
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.randomness import RandomSource
from raffle.service.ports import UnitOfWork
from raffle.settings import Settings


@dataclass
class Raffle:
    """A wired application: what entrypoints need to run use cases."""

    settings: Settings
    engine: AsyncEngine
    rng: RandomSource = field(default_factory=SystemRandomSource)

    def uow(self) -> UnitOfWork:
        return SqlUnitOfWork(self.engine)

    async def close(self) -> None:
        await self.engine.dispose()


def bootstrap(settings: Settings | None = None) -> Raffle:
    """Wire real adapters; connects lazily, on first use."""
    settings = settings or Settings()
    return Raffle(settings=settings, engine=create_engine(settings.database_url))
