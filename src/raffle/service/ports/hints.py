"""Chance hints: marks of users the database found without a chance, for fast refusals."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

Holder = tuple[str, int]  # a quota account: (user_id, activity_id)


@dataclass(frozen=True, slots=True)
class Look:
    """What the hints say before a draw's transaction."""

    refused: bool  # a trusted mark: no chance in this scope, the draw may be refused at once
    generation: str | None  # what a mark written after the draw carries; None: write none


class ChanceHints(Protocol):
    """Marks of (user, activity) without a chance, each trusted only while no credit of that
    account began since the mark's generation was read (service/refusals.py has the rule)."""

    async def look(
        self, holder: Holder, scope: str, request_key: str | None, now: datetime
    ) -> Look:
        """Whether a trusted mark for `scope` refuses the draw, else the generation to mark
        with. A draw with a `request_key` is refused only if no draw with that key went to
        the database before (a retry must find its first answer there); one that goes is
        remembered as having gone."""
        ...

    async def mark(self, holder: Holder, scope: str, generation: str, now: datetime) -> None:
        """The database found no chance in `scope` after `generation` was read."""
        ...

    async def begin_credit(self, holders: Sequence[Holder], credit: str, now: datetime) -> None:
        """Credit `credit` to the holders is about to commit: their marks are void, and new
        ones are not written, until `end_credit` (or until it expires)."""
        ...

    async def end_credit(self, holders: Sequence[Holder], credit: str, now: datetime) -> None:
        """Credit `credit` committed or was undone: marks read before now are void."""
        ...
