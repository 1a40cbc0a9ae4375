"""The doors to who a user is: their profile, and whether an audience (a tag) holds them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Protocol

from raffle.domain.profiles import Profile


class ProfileRepository(Protocol):
    """Profiles in the configuration database (`UnitOfWork.profiles`)."""

    async def get(self, user_id: str) -> Profile | None: ...

    async def put(self, profile: Profile) -> None:
        """Insert the profile, or replace the user's."""
        ...

    async def page(self, after: str | None, limit: int) -> Sequence[Profile]:
        """Up to `limit` profiles by user id, from the first after `after`: a scan in pages
        (a tag's preview, an export)."""
        ...


class Profiles(Protocol):
    """A user's profile as the draw and the router read it: kept in memory or Redis and
    forgotten when it changes, so that reading it costs no database round trip in the
    common case. A user without a stored profile has an empty one (`Profile(user_id)`)."""

    async def of(self, user_id: str) -> Profile: ...


class Audience(Protocol):
    """Tags (static member lists and dynamic conditions on profile facts), by name."""

    async def holds(self, tag: str, profile: Profile, today: date) -> bool:
        """Whether the tag named `tag` holds the user of `profile` on `today` (in the
        activity's zone). An unknown tag holds no one."""
        ...
