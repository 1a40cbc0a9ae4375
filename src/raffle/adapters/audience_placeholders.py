"""Stand-ins for the profiles and tags ports until their adapters are wired: every user has
an empty profile, and no tag holds anyone (or, StaticTags, tags as member lists held in
this process)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import date

from raffle.domain.profiles import Profile


class NoProfiles:
    async def of(self, user_id: str) -> Profile:
        return Profile(user_id)


class NoAudience:
    async def holds(self, tag: str, profile: Profile, today: date) -> bool:
        return False


class StaticTags:
    """Tags as member lists held in this process: set `members` (tag -> user ids)."""

    def __init__(self, members: Mapping[str, Collection[str]] | None = None) -> None:
        self.members = {tag: set(users) for tag, users in (members or {}).items()}

    async def holds(self, tag: str, profile: Profile, today: date) -> bool:
        return profile.user_id in self.members.get(tag, ())
