"""Locking an account on every backend (SQLite with sessions in SQL; PostgreSQL and MariaDB
with sessions in Redis): its sessions end at once, its sign-ins are refused, what it owns
is kept; unlocking lets it sign in again. The schema's status is listed and migrated."""

from __future__ import annotations

import pytest

from raffle.adapters.passwords import PasswordHasher
from raffle.adapters.sql.migrate import downgrade, upgrade
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.bootstrap import Raffle
from raffle.domain.users import (
    AccountLocked,
    InvalidCredentials,
    NotAuthenticated,
    SessionEnded,
    User,
    UserStatus,
)
from raffle.service import accounts, auth
from raffle.service.draw import Draw, draw
from raffle.service.points import earn, my_points
from raffle.service.quotas import my_account
from tests.integration.raffles import ACTIVITY, Build, campaign

PASSWORD = "correct horse"


async def _login(raffle: Raffle, name: str, password: str = PASSWORD) -> str:
    token, _ = await auth.login(
        name, password, ip="10.0.0.1", uow=raffle.uow(), hasher=raffle.hasher,
        sessions=raffle.sessions, limiter=raffle.limiter, clock=raffle.clock,
    )  # fmt: skip
    return token


async def _signed_in(raffle: Raffle, token: str) -> bool:
    try:
        await auth.authenticate(token, raffle.sessions)
    except NotAuthenticated:
        return False
    return True


async def _ended(raffle: Raffle, token: str) -> bool:
    """Whether the token is told its session was ended (not merely unknown)."""
    try:
        await auth.authenticate(token, raffle.sessions)
    except SessionEnded:
        return True
    except NotAuthenticated:
        return False
    return False


async def _owned(raffle: Raffle, user: str, order_id: str) -> tuple[object, ...]:
    """Everything of the user a lock must leave alone: chances, points and their orders,
    the win and its raffle order."""
    points = await my_points(user, shards=raffle.shards, before=None, limit=10)
    async with raffle.shards.for_user(user) as uow:
        win = await uow.wins.get(order_id)
    return await _draws_left(raffle, user), points.account, points.orders, win


async def _draws_left(raffle: Raffle, user: str) -> int:
    account = await my_account(
        user, ACTIVITY, catalogue=raffle.catalogue, shards=raffle.shards, clock=raffle.clock,
        hints=raffle.hints,
    )  # fmt: skip
    return account.total_left


async def test_a_lock_ends_the_sessions_refuses_sign_in_and_keeps_what_is_owned(
    build: Build,
) -> None:
    raffle = await build(campaign(rate="1"))
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)  # fast tests
    for name in ("alice", "bob"):
        await auth.create_user(name, PASSWORD, False, raffle.uow(), raffle.hasher)
    won = await draw(
        Draw("alice", ACTIVITY), catalogue=raffle.catalogue, shards=raffle.shards,
        stock=raffle.stock, rng=raffle.rng, clock=raffle.clock, hints=raffle.hints,
    )  # fmt: skip
    async with raffle.shards.for_user("alice") as uow:
        await earn(
            uow, user_id="alice", amount=70, out_business_no="gift-1", reason="gift",
            now=raffle.clock.now(),
        )  # fmt: skip
        await uow.commit()
    before = await _owned(raffle, "alice", won.order_id)
    hers = [await _login(raffle, "alice"), await _login(raffle, "alice")]
    his = await _login(raffle, "bob")

    locked = await accounts.lock(
        "alice", by="root", reason="chargebacks", uow=raffle.uow(), sessions=raffle.sessions,
        clock=raffle.clock,
    )  # fmt: skip

    assert locked.status is UserStatus.LOCKED
    assert [await _ended(raffle, t) for t in hers] == [True, True]
    assert await _signed_in(raffle, his)
    with pytest.raises(AccountLocked):
        await _login(raffle, "alice")
    with pytest.raises(InvalidCredentials):
        await _login(raffle, "alice", "not her password")
    assert await _owned(raffle, "alice", won.order_id) == before

    await accounts.unlock("alice", by="root", uow=raffle.uow(), clock=raffle.clock)
    assert await _signed_in(raffle, await _login(raffle, "alice"))
    assert [await _ended(raffle, t) for t in hers] == [True, True]  # the old ones stay ended
    assert await _owned(raffle, "alice", won.order_id) == before
    assert before[1].available == 70  # type: ignore[attr-defined]
    _, changes = await accounts.changes("alice", raffle.uow())
    assert [(c.status, c.reason, c.by) for c in changes] == [
        (UserStatus.ACTIVE, "", "root"),
        (UserStatus.LOCKED, "chargebacks", "root"),
    ]


async def test_a_password_reset_ends_the_sessions_of_the_old_one(build: Build) -> None:
    raffle = await build(campaign())
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    await auth.create_user("alice", PASSWORD, False, raffle.uow(), raffle.hasher)
    token = await _login(raffle, "alice")
    await accounts.reset_password(
        "alice", "a brand new one", uow=raffle.uow(), hasher=raffle.hasher,
        sessions=raffle.sessions,
    )  # fmt: skip
    assert await _ended(raffle, token)
    with pytest.raises(InvalidCredentials):
        await _login(raffle, "alice")
    assert await _signed_in(raffle, await _login(raffle, "alice", "a brand new one"))


async def test_accounts_from_before_the_status_are_active_and_listed(database_url: str) -> None:
    await upgrade(database_url, "0008")
    hashed = await PasswordHasher(time_cost=1, memory_cost=8, parallelism=1).hash_async(PASSWORD)
    engine = create_engine(database_url)
    try:
        async with SqlUnitOfWork(engine) as uow:  # the row as code before 0009 wrote it
            assert await uow.users.add(User("old-timer", hashed))
            await uow.commit()
    finally:
        await engine.dispose()
    await upgrade(database_url)
    engine = create_engine(database_url)
    try:
        found, total = await accounts.listed(SqlUnitOfWork(engine), 10)
    finally:
        await engine.dispose()
    assert [(u.id, u.status) for u in found] == [("old-timer", UserStatus.ACTIVE)]
    assert total == 1
    await downgrade(database_url, "0008")  # and back down: 0009 undoes itself
