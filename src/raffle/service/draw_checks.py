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
    """What refuses a draw before the activity is read, and then by the activity.

    The player's own standing first (deny lists, an operator's pause, the rate limit), all
    from memory and Redis; then, once the activity is read, its join code. The quota and the
    participation policies come after these, in draw() itself.
    """

    deny: DenyBoard
    profiles: Profiles
    switches: SwitchBoard
    limiter: RateLimiter
    join_codes: JoinCodeGate

    async def player(self, user_id: str, activity_id: int, ip: str | None) -> None:
        """Denied (403), DrawsPaused (503) or RateLimited (429), in that order."""
        await screen(self.deny, user_id=user_id, ip=ip, profiles=self.profiles)
        switches = self.switches.current
        paused(switches, activity_id)
        limit = switches.limits["draws_per_second"]
        if wait := await self.limiter.hit(f"draw:{user_id}", limit, 1):
            raise RateLimited(f"at most {limit} draws per second", wait)

    async def activity(self, activity: Activity, user_id: str) -> None:
        """JoinCodeRequired (403) where the activity needs a code the user has not redeemed."""
        await self.join_codes.admit(activity, user_id)
