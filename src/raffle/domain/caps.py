"""Activity-wide caps (seed 004): total winners, total participants, every draw a win."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from raffle.domain.errors import InvalidConfig, RaffleError

CAPPED = "cap"  # the rule recorded on a draw whose win the winners cap turned into the fallback


class Cap(IntEnum):
    """An activity's counted caps, each a counter of slots 1..limit like a prize's stock."""

    WINNERS = 1  # `award_num_limit`: draws that won a real prize
    PARTICIPANTS = 2  # `join_people_total_limit`: users who drew at least once


@dataclass(frozen=True, slots=True)
class Caps:
    """An activity's caps; None: no cap. Published with its odds, frozen once it runs."""

    winners: int | None = None
    participants: int | None = None
    perfect: bool = False  # every draw wins a real prize while stock lasts

    def __post_init__(self) -> None:
        for name, limit in (("award_num_limit", self.winners),
                            ("join_people_total_limit", self.participants)):  # fmt: skip
            if limit is not None and limit < 1:
                raise InvalidConfig(f"{name} must be at least 1, got {limit}", (name,))

    def limits(self) -> dict[int, int]:
        """The counted caps that are set, by Cap number: what their counters start from."""
        found = {Cap.WINNERS: self.winners, Cap.PARTICIPANTS: self.participants}
        return {int(cap): limit for cap, limit in found.items() if limit is not None}

    @property
    def counted(self) -> bool:
        return self.winners is not None or self.participants is not None


NO_CAPS = Caps()


class ActivityFull(RaffleError):
    """A new participant beyond `join_people_total_limit`; users already in keep drawing."""

    code = "activity_full"
