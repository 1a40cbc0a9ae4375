"""Sign-up, sign-in throttling, token sessions and the admin role, on fakes."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta

import pytest

from raffle.adapters.rate_limits import MemoryRateLimiter
from raffle.domain.users import (
    Forbidden,
    InvalidCredentials,
    InvalidInput,
    NameTaken,
    NotAuthenticated,
    RateLimited,
    Session,
)
from raffle.service import auth
from tests.unit.auth_fakes import (
    START,
    CountingHasher,
    FakeClock,
    FakeSessionStore,
    FakeUserUnitOfWork,
)

PASSWORD = "correct horse"
DAY = 24 * 3600
TTL = timedelta(seconds=auth.SESSION_TTL)


@dataclass
class World:
    clock: FakeClock
    uow: FakeUserUnitOfWork
    hasher: CountingHasher
    sessions: FakeSessionStore
    limiter: MemoryRateLimiter

    async def login(
        self, name: str = "alice", password: str = PASSWORD, ip: str = "10.0.0.1"
    ) -> tuple[str, Session]:
        return await auth.login(
            name,
            password,
            ip=ip,
            uow=self.uow,
            hasher=self.hasher,
            sessions=self.sessions,
            limiter=self.limiter,
            clock=self.clock,
        )

    async def fail(self, name: str = "alice", ip: str = "10.0.0.1") -> None:
        with pytest.raises(InvalidCredentials):
            await self.login(name, "wrong password", ip)


@pytest.fixture
async def world() -> World:
    clock = FakeClock()
    w = World(
        clock,
        FakeUserUnitOfWork(),
        CountingHasher(),
        FakeSessionStore(clock),
        MemoryRateLimiter(clock),
    )
    await auth.register("alice", PASSWORD, w.uow, w.hasher)
    await auth.create_user("root", PASSWORD, True, w.uow, w.hasher)
    return w


# --- registering ------------------------------------------------------------------------


async def test_registering_stores_the_hash_not_the_password(world: World) -> None:
    user = await auth.register("bob.b-2", "s3cret-pass", world.uow, world.hasher)
    assert world.uow.committed_users["bob.b-2"] == user
    assert user.password_hash == "fake$s3cret-pass"
    assert not user.is_admin
    assert world.uow.committed_users["root"].is_admin


@pytest.mark.parametrize(
    ("name", "password", "message"),
    [
        ("al", PASSWORD, "name must be"),
        ("a" * 33, PASSWORD, "name must be"),
        ("bob smith", PASSWORD, "name must be"),
        ("bob:1", PASSWORD, "name must be"),
        ("bob", "short12", "at least 8 characters"),
    ],
)
async def test_registering_refuses_a_bad_name_or_short_password(
    world: World, name: str, password: str, message: str
) -> None:
    commits = world.uow.commits
    with pytest.raises(InvalidInput, match=message):
        await auth.register(name, password, world.uow, world.hasher)
    assert world.uow.commits == commits
    assert name not in world.uow.committed_users


async def test_registering_a_taken_name_fails_and_keeps_the_first_user(world: World) -> None:
    with pytest.raises(NameTaken) as error:
        await auth.register("alice", "another password", world.uow, world.hasher)
    assert error.value.code == "name_taken"
    assert world.uow.committed_users["alice"].password_hash == f"fake${PASSWORD}"


# --- signing in -------------------------------------------------------------------------


async def test_signing_in_returns_a_256_bit_token_and_stores_only_its_hash(world: World) -> None:
    token, session = await world.login()
    assert len(token) >= 43  # 32 random bytes in URL-safe base64: 256 bits
    assert session == Session("alice", False, START + TTL)
    assert list(world.sessions.rows) == [hashlib.sha256(token.encode()).hexdigest()]
    assert token not in repr(world.sessions.rows)


async def test_every_sign_in_gets_its_own_token(world: World) -> None:
    tokens = {(await world.login())[0] for _ in range(5)}
    assert len(tokens) == 5
    assert len(world.sessions.rows) == 5


async def test_a_wrong_password_and_an_unknown_name_fail_alike_and_cost_alike(world: World) -> None:
    errors = []
    for name in ("alice", "nobody"):
        before = world.hasher.calls
        with pytest.raises(InvalidCredentials) as error:
            await world.login(name, "wrong password")
        errors.append((error.value.code, error.value.message))
        assert world.hasher.calls == before + 1  # the unknown name is hashed all the same
    assert errors[0] == errors[1] == ("invalid_credentials", auth.WRONG_CREDENTIALS)
    assert world.sessions.rows == {}


async def test_a_name_no_account_can_have_fails_without_hashing_or_a_counter(world: World) -> None:
    long_name = "x" * 10_000
    with pytest.raises(InvalidCredentials, match=auth.WRONG_CREDENTIALS):
        await world.login(long_name, PASSWORD)
    assert world.hasher.calls == 2  # the two sign-ups of the fixture only
    assert await world.limiter.count(f"login-fail:{long_name}", auth.ACCOUNT_WINDOW) == 0


async def test_the_101st_failure_is_refused_before_any_hashing(world: World) -> None:
    for i in range(auth.ACCOUNT_FAILURES):
        await world.fail(ip=f"10.0.{i}.1")  # from many addresses: the account limit applies
    calls = world.hasher.calls
    with pytest.raises(RateLimited) as error:
        await world.login(ip="10.1.0.1")  # even the right password
    assert world.hasher.calls == calls
    assert 0 < error.value.retry_after <= auth.ACCOUNT_WINDOW
    assert world.sessions.rows == {}


async def test_an_account_refused_for_failures_signs_in_after_the_window(world: World) -> None:
    for i in range(auth.ACCOUNT_FAILURES):
        await world.fail(ip=f"10.0.{i}.1")
    world.clock.advance(auth.ACCOUNT_WINDOW - 1)
    with pytest.raises(RateLimited) as error:
        await world.login()
    assert error.value.retry_after == 1
    world.clock.advance(1)
    token, _ = await world.login()
    assert token


async def test_unknown_names_are_throttled_like_accounts(world: World) -> None:
    for i in range(auth.ACCOUNT_FAILURES):
        await world.fail("nobody", ip=f"10.0.{i}.1")
    with pytest.raises(RateLimited):
        await world.login("nobody", ip="10.1.0.1")
    assert (await world.login("alice", ip="10.1.0.1"))[0]  # other accounts are untouched


async def test_one_address_gets_30_attempts_a_minute(world: World) -> None:
    for _ in range(auth.IP_ATTEMPTS - 1):
        await world.fail()
    assert (await world.login())[0]  # the 30th attempt, a right one, still passes
    calls = world.hasher.calls
    with pytest.raises(RateLimited) as error:
        await world.login("root")
    assert error.value.code == "rate_limited"
    assert error.value.retry_after == auth.IP_WINDOW
    assert world.hasher.calls == calls
    assert (await world.login(ip="10.0.0.2"))[0]  # another address is not limited
    world.clock.advance(auth.IP_WINDOW)
    assert (await world.login())[0]


# --- sessions ---------------------------------------------------------------------------


async def test_a_session_slides_while_used_and_expires_when_not(world: World) -> None:
    token, _ = await world.login()
    ttl = auth.SESSION_TTL
    for _ in range(3):  # three weeks in all, each use within a week of the last
        world.clock.advance(ttl - 1)
        session = await auth.authenticate(token, world.sessions)
        assert session.user_id == "alice"
        assert session.expires_at == world.clock.now() + TTL
    world.clock.advance(ttl)
    with pytest.raises(NotAuthenticated):
        await auth.authenticate(token, world.sessions)
    assert world.sessions.rows == {}


async def test_a_session_takes_the_ttl_it_is_given(world: World) -> None:
    token, _ = await world.login()
    await auth.authenticate(token, world.sessions, ttl_seconds=DAY)
    world.clock.advance(DAY)
    with pytest.raises(NotAuthenticated):
        await auth.authenticate(token, world.sessions, ttl_seconds=DAY)


@pytest.mark.parametrize("token", [None, "", "not-a-token"])
async def test_a_missing_or_unknown_token_is_not_authenticated(
    world: World, token: str | None
) -> None:
    await world.login()
    with pytest.raises(NotAuthenticated) as error:
        await auth.authenticate(token, world.sessions)
    assert error.value.code == "not_authenticated"


async def test_logging_out_ends_only_that_session(world: World) -> None:
    token, _ = await world.login()
    other, _ = await world.login()
    await auth.logout(token, world.sessions)
    with pytest.raises(NotAuthenticated):
        await auth.authenticate(token, world.sessions)
    assert (await auth.authenticate(other, world.sessions)).user_id == "alice"


async def test_only_operators_pass_require_admin(world: World) -> None:
    root_token, root_session = await world.login("root")
    assert root_session.is_admin
    auth.require_admin(await auth.authenticate(root_token, world.sessions))
    token, _ = await world.login()
    with pytest.raises(Forbidden) as error:
        auth.require_admin(await auth.authenticate(token, world.sessions))
    assert error.value.code == "forbidden"


# --- the in-memory rate limiter ---------------------------------------------------------


async def test_the_memory_limiter_counts_a_fixed_window_from_its_first_hit() -> None:
    clock = FakeClock()
    limiter = MemoryRateLimiter(clock)
    assert [await limiter.hit("k", 3, 10) for _ in range(3)] == [0, 0, 0]
    clock.advance(4)
    assert await limiter.hit("k", 3, 10) == 6  # seconds left in the window
    assert await limiter.count("k", 10) == 4
    assert await limiter.count("other", 10) == 0
    clock.advance(5.5)
    assert await limiter.hit("k", 3, 10) == 1  # rounded up: never "retry now" while limited
    clock.advance(0.5)
    assert await limiter.count("k", 10) == 0
    assert await limiter.hit("k", 3, 10) == 0


async def test_the_memory_limiter_resets_a_key() -> None:
    limiter = MemoryRateLimiter(FakeClock())
    for _ in range(2):
        await limiter.hit("k", 1, 60)
    await limiter.reset("k")
    assert await limiter.count("k", 60) == 0
    assert await limiter.hit("k", 1, 60) == 0
    await limiter.reset("never seen")


async def test_the_memory_limiter_forgets_ended_windows() -> None:
    clock = FakeClock()
    limiter = MemoryRateLimiter(clock)
    clock.advance(1000)
    for i in range(100):
        await limiter.hit(f"scan-{i}", 5, 10)
    clock.advance(61)
    await limiter.hit("late", 5, 120)
    assert set(limiter._windows) == {"late"}
