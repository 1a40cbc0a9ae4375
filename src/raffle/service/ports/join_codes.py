"""The door to join codes: the activities' codes and who redeemed each."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from raffle.domain.join_codes import JoinCode, JoinCodeCounts


class Redemption(StrEnum):
    BOUND = "bound"  # the code was unused and is now the user's
    TAKEN = "taken"  # no unused code of that value: missing, or bound already
    HELD = "held"  # the user holds another code of the activity: nothing changed


class JoinCodeRepository(Protocol):
    """Join codes in the configuration database (`UnitOfWork.join_codes`)."""

    async def add(self, codes: Sequence[JoinCode]) -> int:
        """Insert the codes whose (activity, code) is not stored yet; how many were new."""
        ...

    async def redeem(self, activity_id: int, code: str, user_id: str, at: datetime) -> Redemption:
        """Bind the unused code to the user: one conditional UPDATE, so of many redeeming
        one code at once exactly one binds it."""
        ...

    async def get(self, activity_id: int, code: str) -> JoinCode | None: ...

    async def held(self, activity_id: int, user_id: str) -> JoinCode | None:
        """The code bound to the user in the activity, if any."""
        ...

    async def counts(self, activity_id: int) -> JoinCodeCounts: ...

    async def page(
        self, activity_id: int, *, after: str | None, limit: int, source: str | None = None
    ) -> list[JoinCode]:
        """Up to `limit` codes of the activity in code order, after `after` (from `source`
        only, if given)."""
        ...
