"""The doors to who a user is: their profile, and whether an audience (a tag) holds them."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

from raffle.domain.profile_fields import PhoneTaken
from raffle.domain.profiles import Profile


@dataclass(frozen=True, slots=True)
class StoredProfile:
    profile: Profile
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class ProfileQuery:
    """What operators search profiles by; every part given must match."""

    user_prefix: str = ""
    phone: str | None = None  # E.164
    level: int | None = None
    region: str | None = None


class ProfileRepository(Protocol):
    """Profiles in the configuration database (`UnitOfWork.profiles`)."""

    async def get(self, user_id: str) -> Profile | None: ...

    async def stored(self, user_id: str) -> StoredProfile | None: ...

    async def many(self, user_ids: Collection[str]) -> dict[str, Profile]:
        """The stored profiles of these users, by user id (those without one: absent)."""
        ...

    async def for_change(self, user_ids: Collection[str]) -> dict[str, Profile]:
        """`many`, each row locked until the transaction ends: a change made from what it
        read is not lost to another made at once."""
        ...

    async def phone_owners(self, phones: Collection[str]) -> dict[str, str]:
        """The user whose profile has each of these numbers, by number."""
        ...

    async def put(self, profile: Profile, at: datetime) -> None:
        """Insert the profile, or replace the user's, as changed `at`; PhoneTaken (and
        nothing else of the transaction undone) when another user's profile has its phone;
        Contention (run the transaction again) when the user's profile was created by
        another transaction since this one found none."""
        ...

    async def put_all(self, profiles: Sequence[Profile], at: datetime) -> dict[str, PhoneTaken]:
        """`put` for each profile (of distinct users); those refused because another user
        has their phone, by user id. The others are written."""
        ...

    async def version(self) -> int:
        """A number every `put` and `put_all` moves on when its transaction commits: a
        process that sees it move knows some profile may have changed."""
        ...

    async def search(
        self, query: ProfileQuery, after: str | None, limit: int
    ) -> list[StoredProfile]:
        """Up to `limit` profiles matching `query`, by user id, from the first after `after`."""
        ...

    async def page(self, after: str | None, limit: int) -> Sequence[Profile]:
        """Up to `limit` profiles by user id, from the first after `after`: a scan in pages
        (a tag's preview, an export)."""
        ...


class Profiles(Protocol):
    """A user's profile as the draw and the router read it: kept in each process's memory
    and forgotten when it changes (the news goes through Redis), so that reading it costs no
    database round trip in the common case. A user without a stored profile has an empty
    one (`Profile(user_id)`)."""

    async def of(self, user_id: str) -> Profile: ...


class Audience(Protocol):
    """Tags (static member lists and dynamic conditions on profile facts), by name."""

    async def holds(self, tag: str, profile: Profile, today: date) -> bool:
        """Whether the tag named `tag` holds the user of `profile` on `today` (in the
        activity's zone). An unknown tag holds no one."""
        ...
