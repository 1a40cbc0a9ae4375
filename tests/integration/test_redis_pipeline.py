"""The shared pipeline on a real Redis: batches form under load, each command keeps its own
result or error, scripts survive a flushed script cache, and a restart mid-load."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from raffle.adapters.redis_pipeline import ROUND_TRIP_SECONDS, LuaScript, SharedPipeline
from raffle.bootstrap import _pipeline
from tests.services import RedisServer

IN_FLIGHT = 500


@pytest.fixture
def redis_kind() -> str:
    """One Redis: a cluster's round trips are a SharedPipeline per master (test_redis_cluster)."""
    return "redis"


# Adds ARGV[1] to the key and answers the new value: a result of its own for every caller.
_ADD = LuaScript("return redis.call('INCRBY', KEYS[1], ARGV[1])")


async def test_a_lone_command_goes_at_once_in_a_round_trip_of_its_own(
    redis: Redis, prefix: str
) -> None:
    commands = SharedPipeline(redis)
    assert await commands.execute("SET", prefix + "k", "v") in (True, b"OK")
    assert await commands.execute("GET", prefix + "k") == b"v"
    assert (commands.commands, commands.round_trips) == (2, 2)


async def test_round_trips_keep_one_connection_and_take_a_fresh_one_once_it_broke(
    redis_url: str, prefix: str
) -> None:
    pool = BlockingConnectionPool.from_url(
        redis_url,
        max_connections=5,
        retry=Retry(ExponentialBackoff(cap=0.1, base=0.01), retries=3),
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
    )
    redis, other = Redis.from_pool(pool), Redis.from_url(redis_url)
    commands = SharedPipeline(redis)
    try:
        first = await commands.execute("CLIENT", "ID")
        assert await commands.execute("INCR", prefix + "n") == 1
        assert await commands.execute("CLIENT", "ID") == first  # kept, not taken anew
        assert await redis.client_id() != first  # not in the pool meanwhile
        await other.execute_command("CLIENT", "KILL", "ID", first)
        assert await commands.execute("INCR", prefix + "n") == 2  # retried on a fresh one
        assert await commands.execute("CLIENT", "ID") != first
        await commands.aclose()  # the kept connection back in the pool: the client's again
        assert await redis.incr(prefix + "n") == 3
    finally:
        await redis.aclose()
        await other.aclose()


async def test_the_commands_that_arrive_during_a_round_trip_all_go_in_the_next(
    redis: Redis, prefix: str
) -> None:
    commands = SharedPipeline(redis)
    # BLPOP holds the first round trip open on the server until its timeout.
    held = asyncio.create_task(commands.execute("BLPOP", prefix + "never", 0.3))
    await asyncio.sleep(0.1)
    replies = await asyncio.gather(*(commands.execute("INCR", prefix + "n") for _ in range(100)))
    assert await held is None
    assert sorted(replies) == list(range(1, 101))
    assert (commands.commands, commands.round_trips) == (101, 2)


async def test_hundreds_of_concurrent_callers_share_round_trips_and_get_their_own_result(
    redis: Redis, prefix: str
) -> None:
    commands = SharedPipeline(redis)
    await redis.script_load(_ADD.body)  # else each first EVALSHA meets NOSCRIPT
    replies = await asyncio.gather(
        *(commands.run(_ADD, [f"{prefix}{i}"], [i]) for i in range(IN_FLIGHT))
    )
    assert replies == list(range(IN_FLIGHT))
    assert commands.commands == IN_FLIGHT
    assert 1 <= commands.round_trips <= IN_FLIGHT / 10  # > 10 commands a round trip
    keys = [f"{prefix}{i}" for i in range(IN_FLIGHT)]
    assert [int(v or 0) for v in await redis.mget(keys)] == list(range(IN_FLIGHT))


async def test_one_failing_command_fails_only_its_caller(redis: Redis, prefix: str) -> None:
    commands = SharedPipeline(redis)
    await redis.hset(prefix + "hash", "field", "1")  # INCR on a hash: WRONGTYPE
    calls = [commands.execute("INCR", prefix + ("hash" if i == 7 else str(i))) for i in range(50)]
    replies = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(replies[7], ResponseError)
    assert "WRONGTYPE" in str(replies[7])
    assert replies[:7] + replies[8:] == [1] * 49
    assert commands.round_trips < 50
    assert await commands.execute("INCR", prefix + "after") == 1  # and it goes on


async def test_scripts_run_again_after_the_script_cache_was_flushed(
    redis: Redis, prefix: str
) -> None:
    commands = SharedPipeline(redis)
    first = await asyncio.gather(*(commands.run(_ADD, [prefix + "n"], [1]) for _ in range(200)))
    assert sorted(first) == list(range(1, 201))
    await redis.script_flush()  # as after a restart or a failover
    assert await redis.script_exists(_ADD.sha) == [False]
    trips = commands.round_trips
    again = await asyncio.gather(*(commands.run(_ADD, [prefix + "n"], [1]) for _ in range(200)))
    assert sorted(again) == list(range(201, 401))  # each ran exactly once: EVAL after NOSCRIPT
    assert commands.round_trips - trips < 200  # the EVALs that followed NOSCRIPT went together
    assert await redis.script_exists(_ADD.sha) == [True]  # EVAL cached it for the next EVALSHA
    trips = commands.round_trips
    await commands.run(_ADD, [prefix + "n"], [1])
    assert commands.round_trips == trips + 1  # EVALSHA again: no SCRIPT EXISTS, no second try


async def test_a_redis_restart_mid_load_fails_only_the_batches_that_met_it(
    redis_server: RedisServer, prefix: str
) -> None:
    redis_server.start()  # a no-op unless an earlier test left it down
    pool = BlockingConnectionPool.from_url(
        redis_server.url,
        max_connections=50,
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.01), retries=3),
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
    )
    redis = Redis.from_pool(pool)
    commands = SharedPipeline(redis)
    answered, failed = 0, 0
    first_pid = redis_server.pid

    async def caller(n: int) -> None:
        nonlocal answered, failed
        for i in range(40):
            try:
                value = await commands.execute("SET", f"{prefix}{n}:{i}", i, "GET")
                assert value is None  # each key written once: nobody got another's reply
                answered += 1
            except (RedisConnectionError, RedisTimeoutError):
                failed += 1
            await asyncio.sleep(0.005)

    async def restart() -> None:
        await asyncio.sleep(0.05)  # batches in flight, more waiting
        redis_server.kill()
        await asyncio.sleep(0.1)
        redis_server.start()

    try:
        await asyncio.gather(restart(), *(caller(n) for n in range(200)))
        assert redis_server.pid != first_pid  # the outage was real: a new server
        assert answered + failed == 200 * 40  # every caller answered, one way or the other
        assert answered > 200 * 40 / 2
        assert commands.commands >= 2 * commands.round_trips  # batches formed under load
        assert await commands.execute("PING") is True  # a fresh connection, the same pipeline
    finally:
        redis_server.start()
        await redis.aclose()


async def test_commands_sent_while_redis_is_down_go_once_it_is_back_within_the_retries(
    redis_server: RedisServer, prefix: str
) -> None:
    redis_server.start()  # a no-op unless an earlier test left it down
    pool = BlockingConnectionPool.from_url(
        redis_server.url,
        max_connections=5,
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=3),  # 0.7 s of sleeps
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
    )
    redis = Redis.from_pool(pool)
    commands = SharedPipeline(redis)
    try:
        assert await commands.execute("PING") is True  # a pooled connection, soon broken
        redis_server.kill()
        sent = asyncio.gather(*(commands.execute("INCR", prefix + "n") for _ in range(20)))
        # Down longer than one connect's own retries: the batch's retries take the pool's
        # connection again, so they span the connects' retries.
        await asyncio.sleep(1.0)
        redis_server.start()
        assert sorted(await sent) == list(range(1, 21))  # each applied once, on the new server
    finally:
        redis_server.start()
        await redis.aclose()


async def test_a_round_trip_past_the_socket_timeout_fails_its_batch_and_the_next_goes_on(
    redis_url: str, prefix: str
) -> None:
    # BLPOP holds its reply past the round trip's timeout: the batch fails as redis-py's
    # own timeouts do, the connection with its unread replies is dropped, and the next batch
    # gets a fresh one. The connections have no timeout of their own, as bootstrap's.
    pool = BlockingConnectionPool.from_url(redis_url, max_connections=5, socket_timeout=None)
    redis = Redis.from_pool(pool)
    commands = SharedPipeline(redis, timeout=0.2)
    try:
        stuck = commands.execute("BLPOP", prefix + "never", 1)
        alongside = commands.execute("INCR", prefix + "n")
        replies = await asyncio.gather(stuck, alongside, return_exceptions=True)
        assert [type(reply) for reply in replies] == [RedisTimeoutError, RedisTimeoutError]
        assert await commands.execute("SET", prefix + "k", "v") is True  # a fresh connection
        assert await commands.execute("GET", prefix + "k") == b"v"  # nobody else's reply
    finally:
        await redis.aclose()


async def test_bootstraps_round_trips_keep_the_urls_timeout_on_connections_without_one(
    redis_url: str, prefix: str
) -> None:
    # redis-py times a write on a connection with a socket timeout by running it as a task
    # of its own; the round trip's timer covers it instead.
    for url, timeout in ((redis_url, ROUND_TRIP_SECONDS), (f"{redis_url}?socket_timeout=0.3", 0.3)):
        commands = _pipeline(url)
        try:
            assert commands.timeout == timeout
            assert await commands.execute("SET", prefix + "k", "v") in (True, b"OK")
            connection = await commands.redis.connection_pool.get_connection()  # type: ignore[no-untyped-call]
            assert connection.socket_timeout is None
            await commands.redis.connection_pool.release(connection)
        finally:
            await commands.aclose()
            await commands.redis.aclose()
