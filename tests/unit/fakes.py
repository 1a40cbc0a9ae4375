"""In-memory fakes of the service ports, for unit tests of use cases."""

from __future__ import annotations

from types import TracebackType
from typing import Self

from raffle.domain.awards import Award
from raffle.domain.strategy import Strategy


class FakeAwards:
    def __init__(self) -> None:
        self.rows: dict[int, Award] = {}

    async def save(self, award: Award) -> None:
        self.rows[award.id] = award

    async def all(self) -> dict[int, Award]:
        return dict(self.rows)


class FakeStrategies:
    def __init__(self) -> None:
        self.rows: dict[int, Strategy] = {}

    async def save(self, strategy: Strategy) -> None:
        self.rows[strategy.id] = strategy

    async def get(self, strategy_id: int) -> Strategy | None:
        return self.rows.get(strategy_id)

    async def ids(self) -> list[int]:
        return sorted(self.rows)


class FakeUnitOfWork:
    """Keeps what was saved only when committed, like a transaction."""

    def __init__(self) -> None:
        self.committed_awards: dict[int, Award] = {}
        self.committed_strategies: dict[int, Strategy] = {}
        self.commits = 0

    async def __aenter__(self) -> Self:
        self.awards, self.strategies = FakeAwards(), FakeStrategies()
        self.awards.rows = dict(self.committed_awards)
        self.strategies.rows = dict(self.committed_strategies)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    async def commit(self) -> None:
        self.committed_awards = dict(self.awards.rows)
        self.committed_strategies = dict(self.strategies.rows)
        self.commits += 1
