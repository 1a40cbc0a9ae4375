"""Profiles imported in bulk: each good row applied, each bad one reported with its line and
nothing of it applied; importing the same rows again changes nothing."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from raffle.domain.errors import RaffleError
from raffle.domain.profile_fields import PhoneTaken, changes_of, edited, user_id
from raffle.domain.profiles import Profile
from raffle.service.contention import retried
from raffle.service.ports import UnitOfWork
from raffle.service.profiles import ProfileCare

CHUNK = 500  # rows a transaction: an import of any size holds no lock for long


@dataclass(frozen=True, slots=True)
class ProfileRow:
    """A row of a file: its first line, and its fields as written (`user_id` among them)."""

    line: int
    fields: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class RowProblem:
    line: int
    code: str  # the stable code of the error, as the API's problems have
    field: str  # "" when the row as a whole is wrong
    message: str


@dataclass(slots=True)
class ImportReport:
    rows: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    problems: list[RowProblem] = field(default_factory=list)

    @property
    def refused(self) -> int:
        return len({p.line for p in self.problems})


@dataclass(slots=True)
class _Chunk:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    problems: list[RowProblem] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Good:
    line: int
    user_id: str
    changes: dict[str, Any]


async def import_profiles(
    rows: Sequence[ProfileRow | RowProblem],
    care: ProfileCare,
    progress: Callable[[int], None] = lambda done: None,
) -> ImportReport:
    """Apply the good rows, in chunks of CHUNK rows a transaction; `progress` is told how
    many rows are done after each chunk. A user named on two rows: the second is refused."""
    report, seen = ImportReport(rows=len(rows)), set[str]()
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]
        good = []
        for row in chunk:
            if isinstance(row, RowProblem):
                report.problems.append(row)
            elif isinstance(checked := _checked(row, care, seen), RowProblem):
                report.problems.append(checked)
            else:
                good.append(checked)
        done = await _apply(good, care)
        report.created += len(done.created)
        report.updated += len(done.updated)
        report.unchanged += done.unchanged
        report.problems += done.problems
        if changed := [*done.created, *done.updated]:
            await care.cache.changed(changed)
        progress(start + len(chunk))
    report.problems.sort(key=lambda p: p.line)
    return report


def _checked(row: ProfileRow, care: ProfileCare, seen: set[str]) -> _Good | RowProblem:
    fields = dict(row.fields)
    try:
        who = user_id(fields.pop("user_id", None))
        if who in seen:
            return RowProblem(row.line, "duplicate_user", "user_id", f"{who} is on an earlier row")
        seen.add(who)
        changes = changes_of(fields)
        if changes.get("phone") is not None:
            changes["phone"] = care.phones.normalise(changes["phone"])
    except RaffleError as error:
        return _problem(row.line, error)
    return _Good(row.line, who, changes)


async def _apply(good: list[_Good], care: ProfileCare) -> _Chunk:
    # A chunk the database dropped to break a deadlock (another import) runs again, whole.
    return await retried(lambda: _apply_once(good, care))


async def _apply_once(good: list[_Good], care: ProfileCare) -> _Chunk:
    async with care.uow() as uow:
        done = await _write(good, uow, care.clock.now())
        await uow.commit()
    return done


async def _write(good: list[_Good], uow: UnitOfWork, now: datetime) -> _Chunk:
    done = _Chunk()
    stored = await uow.profiles.for_change([g.user_id for g in good])
    owners = await uow.profiles.phone_owners(
        [p for g in good if (p := g.changes.get("phone")) is not None]
    )
    writes: dict[str, tuple[int, Profile]] = {}
    for row in good:
        current = stored.get(row.user_id)
        try:
            updated = edited(current or Profile(row.user_id), row.changes, now.date())
            if updated.phone is not None and owners.get(updated.phone, row.user_id) != row.user_id:
                raise PhoneTaken(f"phone {updated.phone} is {owners[updated.phone]}'s")
        except RaffleError as error:
            done.problems.append(_problem(row.line, error))
            continue
        if updated == current:
            done.unchanged += 1
            continue
        if current is not None and current.phone is not None:
            owners.pop(current.phone, None)  # given up, or kept and set again below
        if updated.phone is not None:
            owners[updated.phone] = row.user_id
        writes[row.user_id] = (row.line, updated)
    refused = await uow.profiles.put_all([p for _, p in writes.values()], now)
    for who, (line, _) in writes.items():
        if (clash := refused.get(who)) is not None:
            done.problems.append(_problem(line, clash))
        else:
            (done.updated if who in stored else done.created).append(who)
    return done


def _problem(line: int, error: RaffleError) -> RowProblem:
    return RowProblem(line, error.code, str(getattr(error, "field", "")), error.message)
