"""Sessions in SQL and Redis, Redis rate limits and argon2 hashes, on real servers (Redis: one
server, then a cluster)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from argon2.exceptions import InvalidHashError
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.passwords import PasswordHasher
from raffle.adapters.rate_limits import RedisRateLimiter
from raffle.adapters.redis_commands import RedisClient, RedisCommands
from raffle.adapters.redis_sessions import RedisSessionStore
from raffle.adapters.sessions import SLIDE_AFTER, SqlSessionStore
from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.tables.config import session as session_table
from raffle.adapters.sql.unit_of_work import create_engine
from raffle.domain.users import NotAuthenticated, Session, SessionEnded
from raffle.service import auth
from tests.unit.auth_fakes import START, FakeClock, FakeUserUnitOfWork

HOUR = 3600
CHEAP = {"time_cost": 1, "memory_cost": 8, "parallelism": 1}  # argon2's minimum: tests only
ALICE = Session("alice", False, START)  # the stores set expires_at themselves


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade(database_url)
    engine = create_engine(database_url)
    yield engine
    await engine.dispose()


def _hash(name: str) -> str:
    return auth.token_hash(f"token of {name}")


# --- passwords --------------------------------------------------------------------------


def test_hashes_are_salted_argon2id_with_the_recommended_parameters() -> None:
    hasher = PasswordHasher()
    first, second = hasher.hash("correct horse"), hasher.hash("correct horse")
    assert first.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert first != second  # a random salt each time
    assert hasher.verify(first, "correct horse")
    assert hasher.verify(second, "correct horse")
    assert not hasher.verify(first, "correct horsE")
    assert not hasher.needs_rehash(first)


def test_cheaper_parameters_are_for_tests_and_call_for_a_rehash() -> None:
    cheap = PasswordHasher(**CHEAP)
    hashed = cheap.hash("pw")
    assert hashed.startswith("$argon2id$v=19$m=8,t=1,p=1$")
    assert PasswordHasher().verify(hashed, "pw")  # parameters travel in the hash
    assert PasswordHasher().needs_rehash(hashed)
    assert not cheap.needs_rehash(hashed)


def test_a_malformed_hash_is_an_error_not_a_wrong_password() -> None:
    with pytest.raises(InvalidHashError):
        PasswordHasher(**CHEAP).verify("plain text", "plain text")


async def test_hashing_leaves_the_event_loop_free() -> None:
    hasher = PasswordHasher()  # tens of milliseconds of work
    ticks = 0
    done = asyncio.Event()

    async def tick() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(tick())
    hashed = await hasher.hash_async("pw")
    assert await hasher.verify_async(hashed, "pw")
    assert not await hasher.verify_async(hashed, "wrong")
    done.set()
    await ticker
    assert ticks > 10  # a blocked loop would not have run the ticker at all


# --- sessions in Redis ------------------------------------------------------------------


async def test_redis_keeps_a_session_under_its_token_hash_with_a_ttl(
    redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> None:
    clock = FakeClock()
    store = RedisSessionStore(redis, clock, prefix=prefix, commands=redis_commands)
    await store.create(Session("root", True, START), _hash("root"), HOUR)
    key = f"{prefix}{_hash('root')}".encode()
    found = [found async for found in redis.scan_iter(f"{prefix}*")]  # KEYS: one node's
    assert sorted(found) == sorted([key, f"{prefix}user:root".encode()])
    assert await redis.smembers(f"{prefix}user:root") == {key}  # type: ignore[misc]
    assert HOUR - 2 <= await redis.ttl(prefix + _hash("root")) <= HOUR
    clock.advance(10)
    touched = await store.touch(_hash("root"), HOUR)
    assert touched == Session("root", True, clock.now() + timedelta(seconds=HOUR))


async def test_touching_a_redis_session_slides_its_ttl(
    redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> None:
    store = RedisSessionStore(redis, FakeClock(), prefix=prefix, commands=redis_commands)
    await store.create(ALICE, _hash("alice"), 60)
    assert await store.touch(_hash("alice"), 24 * HOUR) is not None
    assert 24 * HOUR - 2 <= await redis.ttl(prefix + _hash("alice")) <= 24 * HOUR


async def test_an_expired_redis_session_is_gone(
    redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> None:
    store = RedisSessionStore(redis, FakeClock(), prefix=prefix, commands=redis_commands)
    await store.create(ALICE, _hash("alice"), 60)
    await redis.pexpire(prefix + _hash("alice"), 1)  # the TTL running out, without the wait
    await asyncio.sleep(0.05)
    assert await store.touch(_hash("alice"), 60) is None
    assert await store.touch(_hash("nobody"), 60) is None


async def test_a_deleted_redis_session_is_gone(
    redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> None:
    store = RedisSessionStore(redis, FakeClock(), prefix=prefix, commands=redis_commands)
    await store.create(ALICE, _hash("alice"), 60)
    await store.create(ALICE, _hash("alice, elsewhere"), 60)
    await store.delete(_hash("alice"))
    assert await store.touch(_hash("alice"), 60) is None
    assert await store.touch(_hash("alice, elsewhere"), 60) is not None
    assert await redis.exists(prefix + _hash("alice")) == 0


async def test_all_redis_sessions_of_a_user_end_at_once(
    redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> None:
    store = RedisSessionStore(redis, FakeClock(), prefix=prefix, commands=redis_commands)
    await store.create(ALICE, _hash("alice"), 60)
    await store.create(ALICE, _hash("alice, elsewhere"), HOUR)
    await store.create(Session("bob", False, START), _hash("bob"), 60)
    assert await store.end_all("alice") == 2
    # The mark keeps the session's own expiry: gone when the session would have been.
    assert 0 < await redis.ttl(prefix + _hash("alice")) <= 60
    assert 60 < await redis.ttl(prefix + _hash("alice, elsewhere")) <= HOUR
    for ended in ("alice", "alice, elsewhere"):  # told ended, not merely unknown
        with pytest.raises(SessionEnded):
            await store.touch(_hash(ended), 60)
    assert await store.touch(_hash("bob"), 60) is not None
    assert await redis.exists(f"{prefix}user:alice") == 0
    assert await store.end_all("alice") == 0


async def test_a_sign_in_forgets_the_users_sessions_that_expired(
    redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> None:
    store = RedisSessionStore(redis, FakeClock(), prefix=prefix, commands=redis_commands)
    await store.create(ALICE, _hash("alice"), 60)
    await redis.delete(prefix + _hash("alice"))  # as when it expired
    await store.create(ALICE, _hash("alice, later"), 60)
    members = await redis.smembers(f"{prefix}user:alice")  # type: ignore[misc]
    assert members == {f"{prefix}{_hash('alice, later')}".encode()}


# --- sessions in SQL --------------------------------------------------------------------


async def _expiry(engine: AsyncEngine, token_hash: str) -> object:
    async with engine.connect() as connection:
        return (
            await connection.execute(
                select(session_table.c.expires_at).where(session_table.c.token_hash == token_hash)
            )
        ).scalar_one_or_none()


async def test_sql_keeps_a_session_and_slides_its_expiry(engine: AsyncEngine) -> None:
    clock = FakeClock()
    store = SqlSessionStore(engine, clock)
    await store.create(Session("root", True, START), _hash("root"), HOUR)
    assert await _expiry(engine, _hash("root")) == START + timedelta(seconds=HOUR)
    for _ in range(3):  # three hours in all, each use within the hour
        clock.advance(HOUR - 0.000_001)
        touched = await store.touch(_hash("root"), HOUR)
        expected = clock.now() + timedelta(seconds=HOUR)
        assert touched == Session("root", True, expected)
        assert await _expiry(engine, _hash("root")) == expected


async def test_touching_a_sql_session_twice_at_one_instant_keeps_it(engine: AsyncEngine) -> None:
    # The second UPDATE changes nothing: MariaDB must still report the row as matched.
    store = SqlSessionStore(engine, FakeClock())
    await store.create(ALICE, _hash("alice"), HOUR)
    assert await store.touch(_hash("alice"), HOUR) is not None
    assert await store.touch(_hash("alice"), HOUR) is not None


async def test_an_expired_sql_session_is_deleted_when_touched(engine: AsyncEngine) -> None:
    clock = FakeClock()
    store = SqlSessionStore(engine, clock)
    await store.create(ALICE, _hash("alice"), HOUR)
    clock.advance(HOUR)
    assert await store.touch(_hash("alice"), HOUR) is None
    assert await _expiry(engine, _hash("alice")) is None
    assert await store.touch(_hash("nobody"), HOUR) is None


async def test_a_deleted_sql_session_is_gone(engine: AsyncEngine) -> None:
    store = SqlSessionStore(engine, FakeClock())
    await store.create(ALICE, _hash("alice"), HOUR)
    await store.create(ALICE, _hash("alice, elsewhere"), HOUR)
    await store.delete(_hash("alice"))
    assert await store.touch(_hash("alice"), HOUR) is None
    assert await store.touch(_hash("alice, elsewhere"), HOUR) is not None
    async with engine.begin() as connection:  # another process: seen at once (no cache)
        await connection.execute(delete(session_table))
    assert await store.touch(_hash("alice, elsewhere"), HOUR) is None


async def test_all_sql_sessions_of_a_user_end_at_once(engine: AsyncEngine) -> None:
    store = SqlSessionStore(engine, FakeClock())
    await store.create(ALICE, _hash("alice"), HOUR)
    await store.create(ALICE, _hash("alice, elsewhere"), HOUR)
    await store.create(Session("bob", False, START), _hash("bob"), HOUR)
    assert await store.end_all("alice") == 2
    for ended in ("alice", "alice, elsewhere"):  # told ended, not merely unknown
        with pytest.raises(SessionEnded):
            await store.touch(_hash(ended), HOUR)
    assert await store.touch(_hash("bob"), HOUR) is not None
    assert await store.end_all("alice") == 0  # ended once


async def test_an_ended_sql_session_is_kept_until_it_would_have_expired(
    engine: AsyncEngine,
) -> None:
    clock = FakeClock()
    store = SqlSessionStore(engine, clock)
    await store.create(ALICE, _hash("alice"), 60)
    await store.end_all("alice")
    clock.advance(30)
    with pytest.raises(SessionEnded):
        await store.touch(_hash("alice"), 60)  # not slid by the touch either
    clock.advance(30)
    assert await store.touch(_hash("alice"), 60) is None
    assert await store.delete_expired() == 0  # the expired touch dropped it


async def test_sql_deletes_the_sessions_left_to_expire(engine: AsyncEngine) -> None:
    clock = FakeClock()
    store = SqlSessionStore(engine, clock)
    await store.create(ALICE, _hash("short"), 60)
    await store.create(ALICE, _hash("long"), HOUR)
    clock.advance(60)
    assert await store.delete_expired() == 1
    assert await _expiry(engine, _hash("short")) is None
    assert await store.touch(_hash("long"), HOUR) is not None


# --- rate limits in Redis ---------------------------------------------------------------


async def test_the_redis_limit_is_reached_at_exactly_n(
    redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> None:
    limiter = RedisRateLimiter(redis, prefix=prefix, commands=redis_commands)
    assert [await limiter.hit("k", 5, HOUR) for _ in range(5)] == [0] * 5
    assert await limiter.count("k", HOUR) == 5
    wait = await limiter.hit("k", 5, HOUR)
    assert HOUR - 2 <= wait <= HOUR
    assert await limiter.count("k", HOUR) == 6
    assert await limiter.count("other", HOUR) == 0


async def test_a_redis_window_ends_and_the_count_starts_again(
    redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> None:
    limiter = RedisRateLimiter(redis, prefix=prefix, commands=redis_commands)
    assert await limiter.hit("k", 1, 1) == 0
    assert await limiter.hit("k", 1, 1) == 1
    await asyncio.sleep(1.05)
    assert await limiter.count("k", 1) == 0
    assert await limiter.hit("k", 1, 1) == 0


async def test_a_redis_limit_resets(
    redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> None:
    limiter = RedisRateLimiter(redis, prefix=prefix, commands=redis_commands)
    for _ in range(3):
        await limiter.hit("k", 1, HOUR)
    await limiter.reset("k")
    assert await limiter.count("k", HOUR) == 0
    assert await limiter.hit("k", 1, HOUR) == 0


async def test_200_concurrent_hits_let_exactly_the_limit_through(
    redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> None:
    limiter = RedisRateLimiter(redis, prefix=prefix, commands=redis_commands)
    waits = await asyncio.gather(*(limiter.hit("hot", 37, HOUR) for _ in range(200)))
    assert waits.count(0) == 37
    assert all(0 < wait <= HOUR for wait in waits if wait)
    assert await limiter.count("hot", HOUR) == 200


async def test_a_counter_left_without_expiry_gets_one(
    redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> None:
    await redis.set(prefix + "k", 7)  # say, written by hand or by an older version
    limiter = RedisRateLimiter(redis, prefix=prefix, commands=redis_commands)
    assert await limiter.hit("k", 100, 60) == 0
    assert 0 < await redis.ttl(prefix + "k") <= 60


async def test_the_redis_limiter_survives_a_flushed_script_cache(
    redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> None:
    limiter = RedisRateLimiter(redis, prefix=prefix, commands=redis_commands)
    assert await limiter.hit("k", 1, HOUR) == 0
    await redis.script_flush()  # as after a restart or failover
    assert await limiter.hit("k", 1, HOUR) > 0


# --- the pieces together ----------------------------------------------------------------


async def test_signing_in_with_argon2_and_redis(
    redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> None:
    clock, uow, hasher = FakeClock(), FakeUserUnitOfWork(), PasswordHasher(**CHEAP)
    sessions = RedisSessionStore(redis, clock, prefix=f"{prefix}session:", commands=redis_commands)
    limiter = RedisRateLimiter(redis, prefix=f"{prefix}rl:", commands=redis_commands)
    await auth.register("alice", "correct horse", uow, hasher)
    assert uow.committed_users["alice"].password_hash.startswith("$argon2id$")
    token, session = await auth.login(
        "alice",
        "correct horse",
        ip="10.0.0.1",
        uow=uow,
        hasher=hasher,
        sessions=sessions,
        limiter=limiter,
        clock=clock,
    )
    assert await auth.authenticate(token, sessions) == session
    assert await limiter.count("login-ip:10.0.0.1", auth.IP_WINDOW) == 1
    await auth.logout(token, sessions)
    with pytest.raises(NotAuthenticated):
        await auth.authenticate(token, sessions)


async def test_a_sql_session_used_again_soon_is_read_not_written(engine: AsyncEngine) -> None:
    clock = FakeClock()
    store = SqlSessionStore(engine, clock)
    await store.create(ALICE, _hash("alice"), HOUR)
    first = START + timedelta(seconds=HOUR)
    clock.advance(HOUR * SLIDE_AFTER / 2)  # too little of the TTL passed to slide it
    assert await store.touch(_hash("alice"), HOUR) == Session("alice", False, first)
    assert await _expiry(engine, _hash("alice")) == first
    clock.advance(HOUR * SLIDE_AFTER)  # now enough has
    slid = clock.now() + timedelta(seconds=HOUR)
    assert await store.touch(_hash("alice"), HOUR) == Session("alice", False, slid)
    assert await _expiry(engine, _hash("alice")) == slid
