"""Redis commands of concurrent callers sent together: one pipeline per round trip."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import hiredis
from redis.asyncio import Redis
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

Arg = str | bytes | int | float
ROUND_TRIP_SECONDS = 5.0  # as long as redis-py gives a command by default

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

    A round trip is a pipeline without a transaction (no MULTI): each command keeps its own
    meaning, result and error. A lost connection, or Redis down, is retried as the retry the
    client was given says, the whole batch again, taking a connection (and so connecting)
    again each try: a command Redis applied before the connection broke is applied twice (as
    a lone command retried the same way always was); a stock take run twice hands out a
    second slot, and the claim rows keyed by slot keep that from overselling.

    The round trip is made on a pool's connection through its public methods rather than
    redis-py's asyncio Pipeline, which packs every argument in Python, starts a timer for
    every reply and does not retry taking its connection: hiredis packs the batch, and one
    timer (the round trip's `timeout`) covers the write and all the replies.

    Round trips go one at a time, so one connection serves them all: it is taken from the
    pool once and kept, not taken and given back around each round trip (the pool's lock,
    its checks and its bookkeeping cost more than the round trip's own work). A try that
    fails drops it (disconnected, given back), and the next try takes a fresh one.

    `timeout` bounds a round trip, its write and all its replies. Give it a client whose
    connections have no socket timeout of their own: redis-py times a write by running it
    as a task of its own (asyncio.wait_for), a task for every round trip.
    """

    def __init__(self, redis: Redis, timeout: float = ROUND_TRIP_SECONDS) -> None:
        self.redis = redis
        self.timeout = timeout
        self.commands = 0  # sent, and round trips made: how well batches form
        self.round_trips = 0
        self._waiting: _Waiting = []
        self._sender: asyncio.Task[None] | None = None
        self._connection: AbstractConnection | None = None  # kept between round trips

    async def execute(self, *command: Arg) -> Any:
        """The command's reply, or its error raised. Its name is one word ("EVALSHA", not
        "SCRIPT LOAD"): the words of the command go as they are given."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting.append((command, future))
        if self._sender is None:
            self._sender = asyncio.create_task(self._send())
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
        attempt = partial(self._attempt, commands)
        retry = self.redis.get_retry()
        try:
            replies = await (attempt() if retry is None else retry.call_with_retry(attempt, _pass))
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

    async def _attempt(self, commands: list[tuple[Arg, ...]]) -> list[Any]:
        """One try on the kept connection, or on one taken from the pool (taking it may
        connect, so a retry covers Redis coming back after a restart too)."""
        pool = self.redis.connection_pool
        connection = self._connection
        if connection is None:
            connection = await pool.get_connection()  # type: ignore[no-untyped-call]
        self._connection = None  # held by this try: closed, it is not taken back
        try:
            replies = await self._exchange(connection, commands)
        except BaseException:
            await connection.disconnect(nowait=True)  # replies may be left unread
            await pool.release(connection)
            raise
        self._connection = connection
        return replies

    async def aclose(self) -> None:
        """Give the kept connection back to the pool (its client closes the pool)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            await self.redis.connection_pool.release(connection)

    async def _exchange(
        self, connection: AbstractConnection, commands: list[tuple[Arg, ...]]
    ) -> list[Any]:
        """The commands in one write, then their replies (an error reply as its exception),
        parsed as the client would."""
        # Its stub types the argument as a 1-tuple; it takes any number of arguments.
        packed = b"".join(hiredis.pack_command(command) for command in commands)  # type: ignore[arg-type]
        replies: list[Any] = []
        try:
            async with asyncio.timeout(self.timeout):
                await connection.send_packed_command(packed)
                for _ in commands:
                    replies.append(await _reply(connection))
        except TimeoutError as error:  # the connection dropped its unread replies
            raise RedisTimeoutError("Timeout reading from Redis") from error
        callbacks = self.redis.response_callbacks  # none for GETEX, EVALSHA, EVAL
        for index, (command, reply) in enumerate(zip(commands, replies, strict=True)):
            callback = callbacks.get(str(command[0]))
            if callback is not None and not isinstance(reply, Exception):
                parsed = callback(reply)
                replies[index] = await parsed if inspect.isawaitable(parsed) else parsed
        return replies


async def _reply(connection: AbstractConnection) -> Any:
    """The next reply, an error reply returned rather than raised. No timer of its own
    (math.inf): the round trip's covers it."""
    try:
        return await connection.read_response(timeout=math.inf)
    except ResponseError as error:
        return error


async def _pass(_error: Exception) -> None:
    """Nothing to do before a retry: a failed try dropped its connection."""


def _cancel(waiting: _Waiting) -> None:
    for _, future in waiting:
        future.cancel()
