"""A stand-in for the tags port until its adapter is wired: no tag holds anyone."""

from __future__ import annotations

from datetime import date

from raffle.domain.profiles import Profile


class NoAudience:
    async def holds(self, tag: str, profile: Profile, today: date) -> bool:
        return False
