"""Profiles read and changed one at a time: by the player (the fields operators opened) and by
operators (any field, and search)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from raffle.domain.profile_fields import (
    FIELDS,
    FieldNotEditable,
    PhoneTaken,
    changes_of,
    edited,
)
from raffle.domain.profile_fields import (
    user_id as checked_user_id,
)
from raffle.domain.profiles import Profile
from raffle.domain.users import UnknownUser, User
from raffle.service.contention import retried
from raffle.service.ports import Clock, UnitOfWork
from raffle.service.ports.audiences import ProfileQuery
from raffle.service.ports.profile_care import Phones
from raffle.service.profile_cache import CachedProfiles


@dataclass(frozen=True, slots=True)
class ProfileCare:
    """What changing a profile needs: storage, the phone book, the processes' copies, time."""

    uow: Callable[[], UnitOfWork]
    phones: Phones
    cache: CachedProfiles
    clock: Clock


@dataclass(frozen=True, slots=True)
class OperatorView:
    """A profile as operators see it: with its account (None: the user has not signed up)."""

    profile: Profile
    updated_at: datetime | None  # None while nothing is stored
    account: User | None


async def edit_my_profile(
    user_id: str, raw: Mapping[str, Any], allowed: frozenset[str], care: ProfileCare
) -> Profile:
    """Change the fields in `raw` of the player's own profile (None clears one; attributes
    merge by name); every field must be one operators let players change."""
    if refused := sorted(set(raw) - allowed):
        opened = ", ".join(sorted(allowed)) or "none"
        raise FieldNotEditable(f"players cannot change {', '.join(refused)} (open: {opened})")
    return await _change(user_id, raw, care, merge=True)


async def put_profile(user_id: str, raw: Mapping[str, Any], care: ProfileCare) -> Profile:
    """Replace the user's profile with `raw`: a field it leaves out is cleared."""
    return await _change(checked_user_id(user_id), raw, care, merge=False)


async def operator_profile(user_id: str, uow: UnitOfWork) -> OperatorView:
    """The stored profile and account of the user; UnknownUser when there is neither."""
    async with uow:
        stored = await uow.profiles.stored(user_id)
        account = await uow.users.get(user_id)
    if stored is None and account is None:
        raise UnknownUser(f"no user {user_id!r} and no profile of it")
    if stored is None:
        return OperatorView(Profile(user_id), None, account)
    return OperatorView(stored.profile, stored.updated_at, account)


async def search(
    query: ProfileQuery, after: str | None, limit: int, *, uow: UnitOfWork, phones: Phones
) -> list[OperatorView]:
    """Profiles matching every part of `query` given, by user id, with their accounts; a
    phone searched is read as any phone is (so "138 0013 8000" finds "+8613800138000")."""
    if query.phone is not None:
        query = ProfileQuery(
            query.user_prefix, phones.normalise(query.phone), query.level, query.region
        )
    async with uow:
        found = await uow.profiles.search(query, after, limit)
        accounts = await uow.users.many([s.profile.user_id for s in found])
    return [OperatorView(s.profile, s.updated_at, accounts.get(s.profile.user_id)) for s in found]


async def every_profile(uow: Callable[[], UnitOfWork], page: int = 1000) -> list[Profile]:
    """Every stored profile, by user id, read a page a transaction."""
    found: list[Profile] = []
    while True:
        async with uow() as reader:
            batch = await reader.profiles.page(found[-1].user_id if found else None, page)
        found += batch
        if len(batch) < page:
            return found


async def _change(
    user_id: str, raw: Mapping[str, Any], care: ProfileCare, *, merge: bool
) -> Profile:
    typed = changes_of(raw if merge else {name: raw.get(name) for name in FIELDS})
    if typed.get("phone") is not None:
        typed["phone"] = care.phones.normalise(typed["phone"])
    return await _apply(user_id, typed, care, merge=merge)


async def _apply(user_id: str, typed: dict[str, Any], care: ProfileCare, *, merge: bool) -> Profile:
    # A change made from a read another transaction outdated runs again.
    updated, changed = await retried(lambda: _apply_once(user_id, typed, care, merge=merge))
    if changed:
        await care.cache.changed([user_id])
    return updated


async def _apply_once(
    user_id: str, typed: dict[str, Any], care: ProfileCare, *, merge: bool
) -> tuple[Profile, bool]:
    """The profile after the change, and whether it changed."""
    now = care.clock.now()
    async with care.uow() as uow:
        stored = (await uow.profiles.for_change([user_id])).get(user_id)
        current = stored or Profile(user_id)
        updated = edited(current if merge else Profile(user_id), typed, now.date())
        if updated == current:
            return current, False
        if updated.phone is not None and updated.phone != current.phone:
            owner = (await uow.profiles.phone_owners([updated.phone])).get(updated.phone)
            if owner not in (None, user_id):
                raise PhoneTaken(f"phone {updated.phone} is another user's")
        await uow.profiles.put(updated, now)
        await uow.commit()
    return updated, True
