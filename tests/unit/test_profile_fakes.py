"""The profile fakes behave as the SQL repository does (tests/integration/test_sql_profiles.py)
on what other parts' unit tests lean on: paging by user id, search, one phone a user."""

from __future__ import annotations

import pytest

from raffle.domain.profile_fields import PhoneTaken
from raffle.domain.profiles import Profile
from raffle.service.ports.audiences import ProfileQuery
from tests.unit.profile_fakes import AT, FakeProfileRepository, FakeProfiles


async def test_the_fake_repository_pages_searches_and_keeps_phones_apart() -> None:
    repository = FakeProfileRepository(Profile(f"u{n}", level=n % 2) for n in range(5))
    assert [p.user_id for p in await repository.page(None, 2)] == ["u0", "u1"]
    assert [p.user_id for p in await repository.page("u1", 10)] == ["u2", "u3", "u4"]
    found = await repository.search(ProfileQuery(level=1), None, 10)
    assert [s.profile.user_id for s in found] == ["u1", "u3"]
    await repository.put(Profile("u0", phone="+8613800138000"), AT)
    with pytest.raises(PhoneTaken):
        await repository.put(Profile("u1", phone="+8613800138000"), AT)
    assert (await FakeProfiles([Profile("a", level=2)]).of("b")) == Profile("b")
