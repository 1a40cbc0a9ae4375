"""Time and transactions: what every door below is built on."""

from __future__ import annotations

from datetime import datetime
from types import TracebackType
from typing import Protocol, Self


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, aware, in UTC."""
        ...


class Transaction(Protocol):
    """`async with` opens one transaction; nothing is kept unless `commit` is awaited in it."""

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def commit(self) -> None: ...
