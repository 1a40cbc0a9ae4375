"""What operators watch: counts of what happened and levels measured now (docs/observability.md)."""

from __future__ import annotations

from typing import Protocol


class Metrics(Protocol):
    """Each method only counts or sets: cheap enough for the draw's path."""

    def answered(self, method: str, route: str, status: int, seconds: float) -> None:
        """An HTTP request, by its route's template (never its path)."""
        ...

    def drawn(self, activity_id: int, outcome: str) -> None:
        """A draw committed (a replay is not one): outcome as DrawEngine.outcome names it."""
        ...

    def refused(self, reason: str) -> None:
        """A draw refused, by the problem's stable code."""
        ...

    def refused_fast(self) -> None:
        """A draw refused from the chance hints, without a transaction (service/refusals)."""
        ...

    def delivered(self, kind: str, result: str) -> None:
        """A delivery attempt of an award of `kind`: `delivered`, or the failure's code."""
        ...

    def dead_lettered(self) -> None:
        """A message reached the dead-letter queue: its delivery failed for good."""
        ...

    def published(self, lag_seconds: float) -> None:
        """The relay published a message this long after its transaction wrote it."""
        ...

    def job_ran(self, job: str, failed: bool) -> None:
        """A scheduled job's run."""
        ...

    def outbox(self, backlog: int, oldest_seconds: float) -> None:
        """Messages not yet published, over every shard, and the age of the oldest (0: none)."""
        ...

    def stock_left(self, strategy_id: int, award_id: int, left: int) -> None: ...


class Unmeasured:
    """Metrics nobody reads: the default of use cases called outside a wired application."""

    def answered(self, method: str, route: str, status: int, seconds: float) -> None:
        return None

    def drawn(self, activity_id: int, outcome: str) -> None:
        return None

    def refused(self, reason: str) -> None:
        return None

    def refused_fast(self) -> None:
        return None

    def delivered(self, kind: str, result: str) -> None:
        return None

    def dead_lettered(self) -> None:
        return None

    def published(self, lag_seconds: float) -> None:
        return None

    def job_ran(self, job: str, failed: bool) -> None:
        return None

    def outbox(self, backlog: int, oldest_seconds: float) -> None:
        return None

    def stock_left(self, strategy_id: int, award_id: int, left: int) -> None:
        return None


UNMEASURED = Unmeasured()
