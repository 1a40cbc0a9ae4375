"""Redis commands of concurrent callers sent together: one pipeline per round trip."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import NoScriptError

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

    A round trip is redis-py's pipeline without a transaction (no MULTI): each command keeps
    its own meaning, result and error. A lost connection is retried on a fresh one as the
    client's `retry` says, the whole batch again: a command Redis applied before the
    connection broke is applied twice (as a lone command retried the same way always was): a
    stock take run twice hands out a second slot, and the claim rows keyed by slot keep that
    from overselling.
    """

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self.commands = 0  # sent, and round trips made: how well batches form
        self.round_trips = 0
        self._waiting: _Waiting = []
        self._sender: asyncio.Task[None] | None = None

    async def execute(self, *command: Arg) -> Any:
        """The command's reply, or its error raised."""
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
        self.commands += len(batch)
        self.round_trips += 1
        pipeline = self.redis.pipeline(transaction=False)
        for command, _ in batch:
            pipeline.execute_command(*command)
        try:
            # An error reply comes back in its command's place; a lost connection or a
            # timeout, once the client's retries are spent, is raised for the whole batch.
            replies = await pipeline.execute(raise_on_error=False)
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


def _cancel(waiting: _Waiting) -> None:
    for _, future in waiting:
        future.cancel()
