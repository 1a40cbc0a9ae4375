"""In-memory fakes of the profile ports, for unit tests of what reads profiles (tags,
participation policies, decision trees)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import UTC, datetime

from raffle.domain.profile_fields import PhoneTaken
from raffle.domain.profiles import Profile
from raffle.service.ports.audiences import ProfileQuery, StoredProfile

AT = datetime(2026, 11, 24, tzinfo=UTC)


class FakeProfileRepository:
    """`UnitOfWork.profiles` over a dict; writes are seen at once (no transaction)."""

    def __init__(self, profiles: Iterable[Profile] = ()) -> None:
        self.rows: dict[str, StoredProfile] = {p.user_id: StoredProfile(p, AT) for p in profiles}
        self.changes = 0  # the version: every put moves it on

    async def get(self, user_id: str) -> Profile | None:
        found = self.rows.get(user_id)
        return None if found is None else found.profile

    async def stored(self, user_id: str) -> StoredProfile | None:
        return self.rows.get(user_id)

    async def many(self, user_ids: Collection[str]) -> dict[str, Profile]:
        return {u: self.rows[u].profile for u in user_ids if u in self.rows}

    async def for_change(self, user_ids: Collection[str]) -> dict[str, Profile]:
        return await self.many(user_ids)

    async def phone_owners(self, phones: Collection[str]) -> dict[str, str]:
        return {s.profile.phone: u for u, s in self.rows.items() if s.profile.phone in phones}

    async def put(self, profile: Profile, at: datetime) -> None:
        owner = (await self.phone_owners([profile.phone] if profile.phone else [])).get(
            str(profile.phone)
        )
        if owner not in (None, profile.user_id):
            raise PhoneTaken(f"phone {profile.phone} is another user's")
        self.rows[profile.user_id] = StoredProfile(profile, at)
        self.changes += 1

    async def put_all(self, profiles: Sequence[Profile], at: datetime) -> dict[str, PhoneTaken]:
        refused = {}
        for profile in profiles:
            try:
                await self.put(profile, at)
            except PhoneTaken as error:
                refused[profile.user_id] = error
        return refused

    async def version(self) -> int:
        return self.changes

    async def page(self, after: str | None, limit: int) -> Sequence[Profile]:
        return [s.profile for s in await self.search(ProfileQuery(), after, limit)]

    async def search(
        self, query: ProfileQuery, after: str | None, limit: int
    ) -> list[StoredProfile]:
        found = [
            s
            for u, s in sorted(self.rows.items())
            if (after is None or u > after)
            and u.startswith(query.user_prefix)
            and query.phone in (None, s.profile.phone)
            and query.level in (None, s.profile.level)
            and query.region in (None, s.profile.region)
        ]
        return found[:limit]


class FakeProfiles:
    """The `Profiles` port over a dict: a user without a profile has an empty one."""

    def __init__(self, profiles: Iterable[Profile] = ()) -> None:
        self.rows = {p.user_id: p for p in profiles}

    async def of(self, user_id: str) -> Profile:
        return self.rows.get(user_id) or Profile(user_id)
