"""The draw's checks before its transaction, run by draw() in one order."""

from __future__ import annotations

from dataclasses import dataclass

from raffle.domain.activity import Activity
from raffle.domain.switches import DrawsPaused, Switches
from raffle.domain.users import RateLimited
from raffle.service.deny_board import DenyBoard
from raffle.service.deny_lists import screen
from raffle.service.join_code_gate import JoinCodeGate
from raffle.service.ports import RateLimiter
from raffle.service.ports.audiences import Profiles
from raffle.service.switchboard import SwitchBoard


def paused(switches: Switches, activity_id: int) -> None:
    """Raises DrawsPaused while an operator has the activity's draws switched off, from the
    process's snapshot of the switches."""
    if activity_id in switches.paused:
        raise DrawsPaused(f"draws of activity {activity_id} are paused by an operator")


@dataclass(frozen=True, slots=True)
class DrawChecks:
    """What refuses a draw before its transaction, besides its quota and policies.

    The player's own standing first (deny lists, an operator's pause), from memory. In
    draw(), the quota's fast refusal comes next, then the rate limit (Redis) and the join
    code (a read of the database for a player who has none): a draw the fast refusal
    answers costs one Redis command, as counting it would, so the limit guards the
    database's work only. Queued and scheduled entries, which have no fast refusal, take
    `player` (the standing and the rate limit) before the activity, then its join code.
    """

    deny: DenyBoard
    profiles: Profiles
    switches: SwitchBoard
    limiter: RateLimiter
    join_codes: JoinCodeGate

    async def standing(self, user_id: str, activity_id: int, ip: str | None) -> None:
        """Denied (403) or DrawsPaused (503), in that order."""
        await screen(self.deny, user_id=user_id, ip=ip, profiles=self.profiles)
        paused(self.switches.current, activity_id)

    async def rate(self, user_id: str) -> None:
        """RateLimited (429) past the draws a user may make a second."""
        limit = self.switches.current.limits["draws_per_second"]
        if wait := await self.limiter.hit(f"draw:{user_id}", limit, 1):
            raise RateLimited(f"at most {limit} draws per second", wait)

    async def player(self, user_id: str, activity_id: int, ip: str | None) -> None:
        """The standing, then the rate limit."""
        await self.standing(user_id, activity_id, ip)
        await self.rate(user_id)

    async def activity(self, activity: Activity, user_id: str) -> None:
        """JoinCodeRequired (403) where the activity needs a code the user has not redeemed."""
        await self.join_codes.admit(activity, user_id)
