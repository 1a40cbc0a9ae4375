"""Redis commands of concurrent callers sent together: one pipeline per round trip."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError

from raffle.adapters import resp

Arg = str | bytes | int | float

_Waiting = list[tuple[tuple[Arg, ...], "asyncio.Future[Any]"]]


@dataclass(frozen=True, slots=True)
class LuaScript:
    """A script run by its SHA-1, and by its body when Redis does not hold it."""

    body: str
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha", hashlib.sha1(self.body.encode()).hexdigest())  # noqa: S324


class SharedPipeline:
    """While one round trip is in flight, the commands that arrive meanwhile wait and then go
    together in the next one: batches form by themselves under load, and with nothing in
    flight a command goes at once (no timer).

    The pipeline is not a transaction (no MULTI): each command keeps its own meaning, result
    and error. A lost connection is retried on a fresh one as the client's `retry` says,
    the whole batch again: a command Redis applied before the connection broke is applied
    twice (as a lone command retried the same way always was).

    The round trips go one at a time, so they keep one connection of the client's pool, and
    write and read on it themselves: redis-py's Pipeline cost ~2.5 times as much CPU per
    round trip (a pool checkout with a probe read under a lock, metrics hooks, its stack).
    """

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self.commands = 0  # sent, and round trips made: how well batches form
        self.round_trips = 0
        self._waiting: _Waiting = []
        self._sender: asyncio.Task[None] | None = None
        self._connection: AbstractConnection | None = None
        self._connection_loop: asyncio.AbstractEventLoop | None = None

    async def execute(self, *command: Arg) -> Any:
        """The command's reply, or its error raised."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._waiting.append((command, future))
        if self._sender is None or self._sender.get_loop() is not loop:
            self._sender = loop.create_task(self._send())
        return await future

    async def run(self, script: LuaScript, keys: Sequence[str], args: Sequence[Arg]) -> Any:
        """EVALSHA, and EVAL when Redis lost its scripts (a restart, SCRIPT FLUSH): no
        SCRIPT EXISTS first. EVAL also caches the script again for the next EVALSHA."""
        try:
            return await self.execute("EVALSHA", script.sha, len(keys), *keys, *args)
        except NoScriptError:  # the script did not run: sending it whole is safe
            return await self.execute("EVAL", script.body, len(keys), *keys, *args)

    async def _send(self) -> None:
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                await self._round_trip(batch)
        finally:
            self._sender = None
            _cancel(self._waiting)  # only if this task was cancelled: nobody would send them
            self._waiting = []

    async def _round_trip(self, batch: _Waiting) -> None:
        commands = [command for command, _ in batch]
        self.commands += len(batch)
        self.round_trips += 1
        try:
            connection = await self._held()
            replies = await connection.retry.call_with_retry(
                lambda: self._exchange(connection, commands),
                lambda _error: connection.disconnect(),  # the next try connects afresh
            )
        except Exception as error:  # every caller of the batch learns it; the next batch goes
            for _, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        except BaseException:
            _cancel(batch)
            raise
        for (_, future), reply in zip(batch, replies, strict=True):
            if future.done():  # its caller was cancelled
                continue
            if isinstance(reply, Exception):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    async def _held(self) -> AbstractConnection:
        """The pool's connection this pipeline keeps (closed with the pool); another on
        another event loop (tests run one per test)."""
        loop = asyncio.get_running_loop()
        if self._connection is None or self._connection_loop is not loop:
            pool: Any = self.redis.connection_pool  # its get_connection is untyped
            self._connection = await pool.get_connection()
            self._connection_loop = loop
        return self._connection

    async def _exchange(
        self, connection: AbstractConnection, commands: list[tuple[Arg, ...]]
    ) -> list[Any]:
        """The commands in one write, then their replies (an error reply as its exception),
        parsed as the client would."""
        try:
            # One timer for the round trip, not one per reply: the client's socket
            # timeout, for the write and the replies together.
            async with asyncio.timeout(connection.socket_timeout):
                reader, writer = await _streams(connection)
                writer.write(resp.pack(commands))
                await writer.drain()
                replies = await resp.read_replies(reader, len(commands))
        except BaseException as error:
            # Cut short (cancelled, timed out, lost): replies may be left unread, so the
            # connection goes; a timeout or a lost connection is the client's, which its
            # `retry` may retry.
            await connection.disconnect(nowait=True)
            if isinstance(error, TimeoutError):
                raise RedisTimeoutError("Timeout reading from Redis") from error
            if isinstance(error, OSError):
                raise RedisConnectionError(f"Error while talking to Redis: {error}") from error
            raise
        callbacks = self.redis.response_callbacks  # none for GETEX, EVALSHA, EVAL
        for index, (command, reply) in enumerate(zip(commands, replies, strict=True)):
            callback = callbacks.get(str(command[0]))
            if callback is not None and not isinstance(reply, Exception):
                parsed = callback(reply)
                replies[index] = await parsed if inspect.isawaitable(parsed) else parsed
        return replies


async def _streams(
    connection: AbstractConnection,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The connection's streams, connected (and signed in) by redis-py when it is not."""
    if not connection.is_connected:
        await connection.connect()  # type: ignore[no-untyped-call]
    # redis-py keeps them private; the pipeline reads and writes them itself (see resp.py).
    reader: Any = getattr(connection, "_reader")  # noqa: B009
    writer: Any = getattr(connection, "_writer")  # noqa: B009
    return reader, writer


def _cancel(waiting: _Waiting) -> None:
    for _, future in waiting:
        future.cancel()
