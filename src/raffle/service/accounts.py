"""Operators' care of accounts: list them, lock and unlock them, reset a password.

Locking keeps everything the user owns (chances, wins, points, orders): it only refuses
their sign-ins and ends their sessions.
"""

from __future__ import annotations

from raffle.domain.users import Forbidden, UnknownUser, User, UserStatus, check_password
from raffle.service.auth import Hasher
from raffle.service.ports import SessionStore, UnitOfWork


async def listed(uow: UnitOfWork, limit: int) -> tuple[list[User], int]:
    """The first `limit` accounts by name, and how many there are in all."""
    async with uow:
        return await uow.users.first(limit), await uow.users.count()


async def lock(user_id: str, *, by: str | None, uow: UnitOfWork, sessions: SessionStore) -> User:
    """Lock the account and end its sessions (`by`: the operator acting, who cannot lock
    their own account and so leave nobody to unlock it)."""
    if by == user_id:
        raise Forbidden("operators cannot lock their own account")
    user = await _set_status(user_id, UserStatus.LOCKED, uow)
    # After the commit: a sign-in that read the account as active before it checks the
    # status again once its session exists (auth.login), so none outlives the lock.
    await sessions.end_all(user_id)
    return user


async def unlock(user_id: str, *, uow: UnitOfWork) -> User:
    return await _set_status(user_id, UserStatus.ACTIVE, uow)


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


async def _set_status(user_id: str, status: UserStatus, uow: UnitOfWork) -> User:
    async with uow:
        if not await uow.users.set_status(user_id, status):
            raise UnknownUser(f"no user {user_id!r}")
        user = await uow.users.get(user_id)
        await uow.commit()
    assert user is not None  # just updated, in this transaction
    return user
