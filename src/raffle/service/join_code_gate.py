"""The draw's check of an activity's join code: who holds one, remembered per process."""

from __future__ import annotations

from collections.abc import Callable

from raffle.domain.activity import Activity
from raffle.domain.join_codes import JoinCodeRequired
from raffle.service.ports import UnitOfWork

REMEMBERED = 200_000  # (activity, user) pairs a process keeps; the oldest go first


class JoinCodeGate:
    """Refuses the draws of users without a code in activities that require one.

    A binding never goes away, so once seen it is remembered and the user's later draws
    pay no read. A user without one is read again each time (they may redeem one in
    another process meanwhile); the draws' rate limit bounds those reads.
    """

    def __init__(self, uow: Callable[[], UnitOfWork], remembered: int = REMEMBERED) -> None:
        self._uow = uow
        self._bound: dict[tuple[int, str], None] = {}  # insertion-ordered: oldest first
        self._remembered = remembered

    async def admit(self, activity: Activity, user_id: str) -> None:
        if not activity.join_code_required or (activity.id, user_id) in self._bound:
            return
        async with self._uow() as uow:
            held = await uow.join_codes.held(activity.id, user_id)
        if held is None:
            raise JoinCodeRequired("this activity needs a join code: redeem one first")
        self.remember(activity.id, user_id)

    def remember(self, activity_id: int, user_id: str) -> None:
        self._bound[activity_id, user_id] = None
        if len(self._bound) > self._remembered:
            del self._bound[next(iter(self._bound))]
