"""The pipeline's own RESP against redis-py on a real Redis: the same bytes sent, the same
values and exceptions back, for the commands the raffle sends (GETEX, EVALSHA, EVAL) and
every reply type their scripts answer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import DataError, NoScriptError, ResponseError

from raffle.adapters import resp
from raffle.adapters.redis_pipeline import LuaScript, SharedPipeline

_BIG = "x" * 70_000  # past redis-py's 6,000-byte chunks and one 64 KiB read
# Every reply type a script can answer, nested: Lua false is a nil bulk, a status table a
# simple string, an error table an error inside an array.
_REPLIES = [
    "return 42",
    "return -7",
    "return 'héllo'",
    "return false",
    "return {}",
    "return redis.status_reply('OK')",
    "return {1, 'two', false, {3, {'four'}}, redis.status_reply('QUEUED')}",
    "return {1, redis.error_reply('ERR nested failure')}",
    f"return '{_BIG}'",
]


def _commands(prefix: str) -> list[tuple[Any, ...]]:
    return [
        ("GETEX", prefix + "session", "EX", 3600),
        ("EVALSHA", "a" * 40, 2, prefix + "a", prefix + "b", 17, 2.5, b"\x00\xff", "ünï"),
        ("EVAL", _BIG, 0),
        ("SCRIPT LOAD", "return 1"),
        (b"SCRIPT EXISTS", "f" * 40),
        ("SET", prefix + "k", -1, "PX", 10**12),
    ]


async def test_commands_are_packed_byte_for_byte_as_redis_py_packs_them(
    redis: Redis, prefix: str
) -> None:
    connection: Any = await redis.connection_pool.get_connection()  # type: ignore[no-untyped-call]
    try:
        commands = _commands(prefix)
        assert resp.pack(commands) == b"".join(connection.pack_commands(commands))
        for bad in (True, None, [1]):  # refused as redis-py refuses them
            with pytest.raises(DataError):
                connection.pack_commands([("SET", "k", bad)])
            with pytest.raises(DataError):
                resp.pack([("SET", "k", bad)])
    finally:
        await redis.connection_pool.release(connection)


def _comparable(reply: Any) -> Any:
    """Exceptions compare by identity: their type and message instead."""
    if isinstance(reply, list):
        return [_comparable(item) for item in reply]
    if isinstance(reply, Exception):
        return (type(reply), str(reply))
    return (type(reply), reply)


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("body", _REPLIES)
async def test_every_reply_type_reads_as_redis_py_reads_it(
    redis_url: str, body: str, protocol: int
) -> None:
    redis = Redis.from_url(redis_url, protocol=protocol)
    try:
        expected = _comparable(await redis.eval(body, 0))  # type: ignore[misc]
        commands = SharedPipeline(redis)
        assert _comparable(await commands.execute("EVAL", body, 0)) == expected
        assert _comparable(await commands.run(LuaScript(body), [], [])) == expected
    finally:
        await redis.aclose()


async def test_getex_reads_as_redis_py_reads_it(redis: Redis, prefix: str) -> None:
    commands = SharedPipeline(redis)
    key = prefix + "session"
    assert await commands.execute("GETEX", key, "EX", 60) is None
    await redis.set(key, b"\x00user\xff")
    assert await commands.execute("GETEX", key, "EX", 60) == await redis.getex(key, ex=60)
    assert 0 < await redis.ttl(key) <= 60


async def test_error_replies_are_redis_py_exceptions_of_their_callers_only(
    redis: Redis, prefix: str
) -> None:
    commands = SharedPipeline(redis)
    replies = await asyncio.gather(
        commands.execute("EVALSHA", "0" * 40, 0),
        commands.execute("EVAL", "return redis.error_reply('MYCODE custom')", 0),
        commands.execute("NOSUCHCOMMAND"),
        commands.execute("INCR", prefix + "n"),
        return_exceptions=True,
    )
    assert type(replies[0]) is NoScriptError
    assert type(replies[1]) is ResponseError
    assert str(replies[1]).startswith("MYCODE custom")
    assert type(replies[2]) is ResponseError
    assert replies[3] == 1
    expected = await redis.eval("return {1, redis.error_reply('ERR nested failure')}", 0)  # type: ignore[misc]
    nested = await commands.execute(
        "EVAL", "return {1, redis.error_reply('ERR nested failure')}", 0
    )
    assert (type(nested[1]), str(nested[1])) == (type(expected[1]), str(expected[1]))


async def test_a_reply_cut_by_a_closed_connection_is_a_connection_error() -> None:
    stream = asyncio.StreamReader()
    stream.feed_data(b"*2\r\n:1\r\n$5\r\nab")
    stream.feed_eof()
    with pytest.raises(RedisConnectionError):
        await resp.read_replies(stream, 1)


async def test_a_reply_split_anywhere_between_reads_reads_whole() -> None:
    wire = b"*3\r\n$3\r\nabc\r\n*-1\r\n*2\r\n+OK\r\n:-12\r\n$-1\r\n-ERR bad thing\r\n"
    for cut in range(1, len(wire)):
        stream = asyncio.StreamReader()
        stream.feed_data(wire[:cut])
        asyncio.get_running_loop().call_soon(stream.feed_data, wire[cut:])
        replies = await resp.read_replies(stream, 3)
        assert replies[:2] == [[b"abc", None, [b"OK", -12]], None]
        assert (type(replies[2]), str(replies[2])) == (ResponseError, "bad thing")
