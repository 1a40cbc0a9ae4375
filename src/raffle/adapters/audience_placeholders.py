"""Stand-ins for the profiles and tags ports until their adapters are wired: every user has
an empty profile, and no tag holds anyone."""

from __future__ import annotations

from datetime import date

from raffle.domain.profiles import Profile


class NoProfiles:
    async def of(self, user_id: str) -> Profile:
        return Profile(user_id)


class NoAudience:
    async def holds(self, tag: str, profile: Profile, today: date) -> bool:
        return False
