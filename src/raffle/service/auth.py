"""Signing up, in and out: accounts, token sessions with sliding expiry, the admin role.

A session token is 256 random bits handed to the client once; only its SHA-256 is stored.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Protocol

from raffle.domain.users import (
    NAME,
    AccountLocked,
    Forbidden,
    InvalidCredentials,
    NameTaken,
    NotAuthenticated,
    RateLimited,
    Session,
    User,
    UserStatus,
    check_new_user,
)
from raffle.service.ports import Clock, RateLimiter, SessionStore, UnitOfWork

ACCOUNT_FAILURES = 100  # failed sign-ins an account takes per window before it is refused
ACCOUNT_WINDOW = 3600
IP_ATTEMPTS = 30  # sign-ins one address may try per window, failed or not
IP_WINDOW = 60
SESSION_TTL = 7 * 24 * 3600  # a session unused this long expires
TOKEN_BYTES = 32

WRONG_CREDENTIALS = "wrong name or password"
LOCKED = "this account is locked; an operator can unlock it"


class Hasher(Protocol):
    async def hash_async(self, password: str) -> str: ...

    async def verify_async(self, password_hash: str, password: str) -> bool: ...


def token_hash(token: str) -> str:
    """What the session stores keep in place of the token."""
    return hashlib.sha256(token.encode()).hexdigest()


async def create_user(
    name: str, password: str, is_admin: bool, uow: UnitOfWork, hasher: Hasher
) -> User:
    """Store a new user (an operator account when `is_admin`); NameTaken if the name is."""
    check_new_user(name, password)
    user = User(id=name, password_hash=await hasher.hash_async(password), is_admin=is_admin)
    async with uow:
        if not await uow.users.add(user):
            raise NameTaken(f"the name {name!r} is taken")
        await uow.commit()
    return user


async def register(name: str, password: str, uow: UnitOfWork, hasher: Hasher) -> User:
    return await create_user(name, password, False, uow, hasher)


async def login(
    name: str,
    password: str,
    *,
    ip: str,
    uow: UnitOfWork,
    hasher: Hasher,
    sessions: SessionStore,
    limiter: RateLimiter,
    clock: Clock,
    ttl_seconds: int = SESSION_TTL,
) -> tuple[str, Session]:
    """A new session and its token, for the right password.

    Throttled before any hashing: `IP_ATTEMPTS` per `IP_WINDOW` from one address, and an
    account refused after `ACCOUNT_FAILURES` failures in `ACCOUNT_WINDOW`. An unknown name and
    a wrong password fail alike, in message and in time.
    """
    await _throttle(name, ip, limiter)
    user = await _check_password(name, password, uow, hasher)
    if user is None:
        await limiter.hit(_failures(name), ACCOUNT_FAILURES, ACCOUNT_WINDOW)
        raise InvalidCredentials(WRONG_CREDENTIALS)
    if user.status is UserStatus.LOCKED:  # told only to who knows the password
        raise AccountLocked(LOCKED)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    session = Session(user.id, user.is_admin, clock.now() + timedelta(seconds=ttl_seconds))
    await sessions.create(session, token_hash(token), ttl_seconds)
    if await _locked(user.id, uow):
        # Locked since the password was checked, its sessions ended maybe before this one
        # existed: this one ends here.
        await sessions.delete(token_hash(token))
        raise AccountLocked(LOCKED)
    return token, session


async def _locked(user_id: str, uow: UnitOfWork) -> bool:
    async with uow:
        user = await uow.users.get(user_id)
    return user is None or user.status is UserStatus.LOCKED


async def _throttle(name: str, ip: str, limiter: RateLimiter) -> None:
    if wait := await limiter.hit(f"login-ip:{ip}", IP_ATTEMPTS, IP_WINDOW):
        raise RateLimited("too many sign-in attempts from this address", wait)
    if not NAME.match(name):
        # No account has such a name, and a name as long as the request is no key to store.
        raise InvalidCredentials(WRONG_CREDENTIALS)
    if await limiter.count(_failures(name), ACCOUNT_WINDOW) >= ACCOUNT_FAILURES:
        # The refused attempt counts as a failure too; counting it tells the time left.
        wait = await limiter.hit(_failures(name), ACCOUNT_FAILURES, ACCOUNT_WINDOW)
        raise RateLimited("too many failed sign-ins for this account", max(wait, 1))


async def _check_password(name: str, password: str, uow: UnitOfWork, hasher: Hasher) -> User | None:
    async with uow:
        user = await uow.users.get(name)
    if user is None:
        # Hashing costs what verifying does: an unknown name takes as long as a known one.
        await hasher.hash_async(password)
        return None
    return user if await hasher.verify_async(user.password_hash, password) else None


def _failures(name: str) -> str:
    return f"login-fail:{name}"


async def authenticate(
    token: str | None, sessions: SessionStore, ttl_seconds: int = SESSION_TTL
) -> Session:
    """The session of `token`, its expiry slid to `ttl_seconds` from now."""
    session = await sessions.touch(token_hash(token), ttl_seconds) if token else None
    if session is None:
        raise NotAuthenticated("not signed in, or the session has expired")
    return session


async def logout(token: str, sessions: SessionStore) -> None:
    await sessions.delete(token_hash(token))


def require_admin(session: Session) -> None:
    if not session.is_admin:
        raise Forbidden("operators only")
