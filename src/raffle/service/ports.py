"""The doors the use cases go through: storage behind a unit of work, stock, randomness."""

from __future__ import annotations

from types import TracebackType
from typing import Protocol, Self

from raffle.domain.awards import Award
from raffle.domain.strategy import Strategy


class AwardRepository(Protocol):
    async def save(self, award: Award) -> None:
        """Insert the award, or replace the one with the same id."""
        ...

    async def all(self) -> dict[int, Award]: ...


class StrategyRepository(Protocol):
    async def save(self, strategy: Strategy) -> None:
        """Insert the strategy, or replace the one with the same id with its prizes and rules."""
        ...

    async def get(self, strategy_id: int) -> Strategy | None: ...

    async def ids(self) -> list[int]: ...


class UnitOfWork(Protocol):
    """One transaction: nothing is kept unless `commit` is awaited inside the block."""

    awards: AwardRepository
    strategies: StrategyRepository

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def commit(self) -> None: ...
