"""Operators' care of accounts on fakes: lock, unlock, reset a password, list."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from raffle.adapters.rate_limits import MemoryRateLimiter
from raffle.domain.users import (
    AccountLocked,
    Forbidden,
    InvalidCredentials,
    InvalidInput,
    Session,
    SessionEnded,
    UnknownUser,
    User,
    UserStatus,
)
from raffle.service import accounts, auth
from tests.unit.auth_fakes import CountingHasher, FakeClock, FakeSessionStore, FakeUserUnitOfWork

PASSWORD = "correct horse"


class World:
    def __init__(self) -> None:
        self.clock = FakeClock()
        self.uow = FakeUserUnitOfWork()
        self.hasher = CountingHasher()
        self.sessions = FakeSessionStore(self.clock)
        self.limiter = MemoryRateLimiter(self.clock)

    async def login(self, name: str = "alice", password: str = PASSWORD) -> tuple[str, Session]:
        return await auth.login(
            name,
            password,
            ip="10.0.0.1",
            uow=self.uow,
            hasher=self.hasher,
            sessions=self.sessions,
            limiter=self.limiter,
            clock=self.clock,
        )

    async def signed_in(self, token: str) -> bool:
        """Whether the token's session is live; an ended one must say so (SessionEnded)."""
        try:
            return await self.sessions.touch(auth.token_hash(token), 60) is not None
        except SessionEnded:
            return False

    async def ended(self, token: str) -> bool:
        with pytest.raises(SessionEnded):
            await auth.authenticate(token, self.sessions)
        return True

    async def lock(
        self, name: str = "alice", by: str | None = "root", reason: str = "fraud"
    ) -> None:
        await accounts.lock(
            name, by=by, reason=reason, uow=self.uow, sessions=self.sessions, clock=self.clock
        )

    async def unlock(self, name: str = "alice") -> User:
        return await accounts.unlock(
            name, by="root", reason="cleared", uow=self.uow, clock=self.clock
        )


@pytest.fixture
async def world() -> World:
    w = World()
    await auth.register("alice", PASSWORD, w.uow, w.hasher)
    await auth.register("bob", PASSWORD, w.uow, w.hasher)
    await auth.create_user("root", PASSWORD, True, w.uow, w.hasher)
    return w


async def test_locking_ends_every_session_of_the_user_and_refuses_sign_in(world: World) -> None:
    first, _ = await world.login()
    second, _ = await world.login()
    bobs, _ = await world.login("bob")

    await world.lock()

    assert world.uow.committed_users["alice"].status is UserStatus.LOCKED
    assert not await world.signed_in(first)
    assert not await world.signed_in(second)
    assert await world.signed_in(bobs)  # only hers
    assert await world.ended(first)
    assert await world.ended(second)
    with pytest.raises(AccountLocked):
        await world.login()


async def test_a_lock_and_an_unlock_keep_who_when_and_why(world: World) -> None:
    await world.lock(reason="chargebacks")
    world.clock.advance(60)
    await world.unlock()

    user, changes = await accounts.changes("alice", world.uow)

    assert user.status is UserStatus.ACTIVE
    assert [(c.status, c.reason, c.by) for c in changes] == [
        (UserStatus.ACTIVE, "cleared", "root"),
        (UserStatus.LOCKED, "chargebacks", "root"),
    ]
    assert changes[0].at - changes[1].at == timedelta(seconds=60)


async def test_a_reason_too_long_changes_nothing(world: World) -> None:
    token, _ = await world.login()
    with pytest.raises(InvalidInput):
        await world.lock(reason="x" * 256)
    assert world.uow.committed_users["alice"].status is UserStatus.ACTIVE
    assert await world.signed_in(token)


async def test_a_locked_account_with_a_wrong_password_is_told_only_that(world: World) -> None:
    await world.lock()
    with pytest.raises(InvalidCredentials):
        await world.login(password="not the password")


async def test_unlocking_restores_sign_in(world: World) -> None:
    await world.lock()
    user = await world.unlock()
    assert user.status is UserStatus.ACTIVE
    token, _ = await world.login()
    assert await world.signed_in(token)


async def test_a_lock_during_sign_in_ends_the_session_it_made(world: World) -> None:
    """The operator locks between the password check and the session's creation: the lock
    found no session to end, so the sign-in must see the lock itself."""
    create = world.sessions.create

    async def locked_meanwhile(session: Session, token_hash: str, ttl_seconds: int) -> None:
        users = world.uow.committed_users
        users["alice"] = replace(users["alice"], status=UserStatus.LOCKED)
        await create(session, token_hash, ttl_seconds)

    world.sessions.create = locked_meanwhile  # type: ignore[method-assign]
    with pytest.raises(AccountLocked):
        await world.login()
    assert world.sessions.rows == {}


async def test_an_operator_cannot_lock_their_own_account(world: World) -> None:
    token, _ = await world.login("root")
    with pytest.raises(Forbidden):
        await world.lock("root", by="root")
    assert world.uow.committed_users["root"].status is UserStatus.ACTIVE
    assert await world.signed_in(token)


async def test_locking_or_unlocking_nobody_is_unknown_user(world: World) -> None:
    with pytest.raises(UnknownUser):
        await world.lock("nobody")
    with pytest.raises(UnknownUser):
        await world.unlock("nobody")


async def test_a_password_reset_takes_the_new_one_and_ends_the_sessions(world: World) -> None:
    token, _ = await world.login()
    await accounts.reset_password(
        "alice", "a new long one", uow=world.uow, hasher=world.hasher, sessions=world.sessions
    )
    assert not await world.signed_in(token)
    with pytest.raises(InvalidCredentials):
        await world.login()
    assert await world.signed_in((await world.login(password="a new long one"))[0])


async def test_a_short_or_unknown_password_reset_changes_nothing(world: World) -> None:
    token, _ = await world.login()
    before = world.uow.commits
    with pytest.raises(InvalidInput):
        await accounts.reset_password(
            "alice", "short", uow=world.uow, hasher=world.hasher, sessions=world.sessions
        )
    with pytest.raises(UnknownUser):
        await accounts.reset_password(
            "nobody", "long enough", uow=world.uow, hasher=world.hasher, sessions=world.sessions
        )
    assert world.uow.commits == before
    assert await world.signed_in(token)


async def test_the_list_is_by_name_up_to_the_limit_with_the_total(world: World) -> None:
    found, total = await accounts.listed(world.uow, 2)
    assert [u.id for u in found] == ["alice", "bob"]
    assert total == 3
