"""Signing up with a phone: screened against the deny lists, kept on the new player's profile."""

from __future__ import annotations

from raffle.domain.profile_fields import PhoneTaken
from raffle.domain.users import User
from raffle.service import auth
from raffle.service.deny_board import DenyBoard
from raffle.service.deny_lists import screen
from raffle.service.profiles import ProfileCare, edit_my_profile

PHONE_ONLY = frozenset({"phone"})


async def register(
    name: str,
    password: str,
    *,
    phone: str | None,
    ip: str,
    deny: DenyBoard,
    care: ProfileCare,
    hasher: auth.Hasher,
) -> User:
    """A new player account; Denied (nothing stored) if the address or the phone is on a
    deny list, PhoneTaken if another user has the phone."""
    e164 = care.phones.normalise(phone) if phone is not None else None
    await screen(deny, ip=ip, phone=e164)
    if e164 is not None:
        async with care.uow() as uow:
            owner = (await uow.profiles.phone_owners([e164])).get(e164)
        if owner not in (None, name):
            raise PhoneTaken(f"phone {phone} is another user's")
    user = await auth.register(name, password, care.uow(), hasher)
    if e164 is not None:
        await edit_my_profile(user.id, {"phone": e164}, PHONE_ONLY, care)
    return user
