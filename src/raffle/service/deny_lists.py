"""Deny lists: operators add, import, list and lift entries; requests are screened against them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from raffle.domain.deny import (
    MAX_REASON,
    Denied,
    DenyEntry,
    DenyKind,
    InvalidDenyEntry,
    UnknownDenyEntry,
    checked_value,
)
from raffle.domain.profile_fields import InvalidPhone
from raffle.service.audit import deny_added, deny_lifted
from raffle.service.blocking import Blocking
from raffle.service.deny_board import DenyBoard
from raffle.service.ports.audiences import Profiles
from raffle.service.ports.deny import DenyQuery
from raffle.service.ports.profile_care import Phones

_PROFILE_KINDS = frozenset({DenyKind.PHONE, DenyKind.SN})


@dataclass(frozen=True, slots=True)
class NewEntry:
    """An entry as an operator writes it: the value not yet normalised."""

    kind: DenyKind
    value: str
    reason: str
    expires_at: datetime | None = None


async def screen(
    board: DenyBoard,
    *,
    user_id: str | None = None,
    ip: str | None = None,
    phone: str | None = None,
    profiles: Profiles | None = None,
) -> None:
    """Denied if the user, their phone or device (from `profiles`, read only while the list
    names some phone or device), the client's address or `phone` is listed and in force."""
    sn = None
    if profiles is not None and user_id is not None and board.list.kinds & _PROFILE_KINDS:
        profile = await profiles.of(user_id)
        phone, sn = phone or profile.phone, profile.sn
    if board.denies(user=user_id, phone=phone, sn=sn, ip=ip):
        raise Denied()


async def add_entry(new: NewEntry, actor: str, board: DenyBoard, phones: Phones) -> DenyEntry:
    """Put an entry on its list, for every process within a second."""
    return await board.add(_entry(new, actor, board, phones))


async def import_entries(
    news: Sequence[NewEntry], actor: str, board: DenyBoard, phones: Phones
) -> int:
    """Store every entry, or none when one is invalid (InvalidDenyEntry names it)."""
    entries = []
    for index, new in enumerate(news):
        try:
            entries.append(_entry(new, actor, board, phones))
        except InvalidDenyEntry as error:
            raise InvalidDenyEntry(f"entry {index}: {error.message}") from None
    added = await board.store.add_many(entries, deny_added)
    await board.changed()
    return added


async def lift(entry_id: int, board: DenyBoard, blocking: Blocking, *, by: str | None) -> DenyEntry:
    """Remove an entry: it denies no more in any process within a second. Lifting an
    automatic entry also clears its rule's count of the subject, which starts again. `by`:
    the operator (None: the command line), for the audit log."""
    lifted = await board.store.lift(entry_id, deny_lifted(by, board.clock.now()))
    if lifted is None:
        raise UnknownDenyEntry(f"no deny entry {entry_id}")
    await board.changed()
    if lifted.evidence is not None:
        await blocking.forget(lifted.evidence.rule_id, lifted.value)
    return lifted


async def entries(
    query: DenyQuery, after: int | None, limit: int, board: DenyBoard, phones: Phones
) -> list[DenyEntry]:
    """A page of entries, newest first; a phone searched is read as any phone is."""
    if query.kind is DenyKind.PHONE and query.value:
        query = replace(query, value=_phone(query.value, phones))
    return await board.store.page(query, after, limit)


def _entry(new: NewEntry, actor: str, board: DenyBoard, phones: Phones) -> DenyEntry:
    reason = new.reason.strip()
    if not reason or len(reason) > MAX_REASON:
        raise InvalidDenyEntry(f"a reason is 1 to {MAX_REASON} characters")
    now = board.clock.now()
    if new.expires_at is not None and new.expires_at <= now:
        raise InvalidDenyEntry("expires_at is in the past")
    value = _phone(new.value, phones) if new.kind is DenyKind.PHONE else new.value
    return DenyEntry(new.kind, checked_value(new.kind, value), reason, actor, now, new.expires_at)


def _phone(text: str, phones: Phones) -> str:
    try:
        return phones.normalise(text)
    except InvalidPhone as error:
        raise InvalidDenyEntry(error.message) from None
