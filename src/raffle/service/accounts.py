"""Operators' care of accounts: list them, lock and unlock them, reset a password.

Locking keeps everything the user owns (chances, wins, points, orders): it only refuses
their sign-ins and ends their sessions.
"""

from __future__ import annotations

from raffle.domain.users import (
    REASON_MAX,
    Forbidden,
    InvalidInput,
    StatusChange,
    UnknownUser,
    User,
    UserStatus,
    check_password,
)
from raffle.service.audit import record
from raffle.service.auth import Hasher
from raffle.service.ports import Clock, SessionStore, UnitOfWork

HISTORY = 20  # the locks and unlocks an account's view shows


async def listed(uow: UnitOfWork, limit: int) -> tuple[list[User], int]:
    """The first `limit` accounts by name, and how many there are in all."""
    async with uow:
        return await uow.users.first(limit), await uow.users.count()


async def lock(
    user_id: str,
    *,
    by: str | None,
    reason: str = "",
    uow: UnitOfWork,
    sessions: SessionStore,
    clock: Clock,
) -> User:
    """Lock the account, recording who (`by`: None from the command line), when and why,
    and end its sessions. An operator cannot lock their own account and so leave nobody to
    unlock it."""
    if by == user_id:
        raise Forbidden("operators cannot lock their own account")
    user = await _set_status(StatusChange(user_id, UserStatus.LOCKED, reason, by, clock.now()), uow)
    # After the commit: a sign-in that read the account as active before it checks the
    # status again once its session exists (auth.login), so none outlives the lock.
    await sessions.end_all(user_id)
    return user


async def unlock(
    user_id: str, *, by: str | None, reason: str = "", uow: UnitOfWork, clock: Clock
) -> User:
    return await _set_status(StatusChange(user_id, UserStatus.ACTIVE, reason, by, clock.now()), uow)


async def changes(user_id: str, uow: UnitOfWork) -> tuple[User, list[StatusChange]]:
    """The account and its last locks and unlocks, newest first."""
    async with uow:
        user = await uow.users.get(user_id)
        if user is None:
            raise UnknownUser(f"no user {user_id!r}")
        return user, await uow.users.changes(user_id, HISTORY)


async def reset_password(
    user_id: str, password: str, *, uow: UnitOfWork, hasher: Hasher, sessions: SessionStore
) -> None:
    """A new password; the sessions opened with the old one end."""
    check_password(password)
    password_hash = await hasher.hash_async(password)
    async with uow:
        if not await uow.users.set_password_hash(user_id, password_hash):
            raise UnknownUser(f"no user {user_id!r}")
        await uow.commit()
    await sessions.end_all(user_id)


async def _set_status(change: StatusChange, uow: UnitOfWork) -> User:
    if len(change.reason) > REASON_MAX:
        raise InvalidInput(f"a reason has at most {REASON_MAX} characters")
    async with uow:
        if not await uow.users.set_status(change.user_id, change.status):
            raise UnknownUser(f"no user {change.user_id!r}")
        await uow.users.record(change)
        kind = "account.lock" if change.status is UserStatus.LOCKED else "account.unlock"
        details = {"reason": change.reason}
        await record(uow.audit, kind, change.user_id, change.at, actor=change.by, details=details)
        user = await uow.users.get(change.user_id)
        await uow.commit()
    assert user is not None  # just updated, in this transaction
    return user
