"""Sessions in Redis, and each API process's copies of the sessions it has just read.

A token's session, once read, is answered from the process's copy for up to `keep` seconds
(no Redis command); the expiry slides in Redis when the copy is renewed, so a session may
expire up to `keep` seconds before "its TTL after its last use". A logout or `end_all` is
published on SESSION_NEWS, and every process forgets its copies of those sessions when it
hears it. Copies are kept only while the process hears the news (`watch()` subscribed): before
its first subscription and from a failure until it has subscribed again, every touch reads
Redis. `keep` bounds how long a copy can outlive news lost without the subscription failing.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from datetime import timedelta

from raffle.adapters.redis_commands import RedisClient, RedisCommands
from raffle.adapters.sessions import ENDED
from raffle.domain.users import Session, SessionEnded
from raffle.service.news import forget_on_news, tell_ids
from raffle.service.ports import Clock, IdNews

SESSION_NEWS = "raffle:sessions"
COPIES = 100_000  # the most sessions a process keeps; the least recently used go first


class RedisSessionStore:
    """One key per session, holding the user and role, that Redis expires by itself; and a
    set per user of their sessions' keys, so that they can all be ended at once.

    The set has no expiry (a session slides past any the set could have): the keys of
    sessions that expired are dropped from it at the user's next sign-in.

    With `news` and `keep` > 0 the process keeps copies of the sessions it read (see the
    module); without, every touch reads Redis.
    """

    def __init__(
        self,
        redis: RedisClient,
        clock: Clock,
        *,
        prefix: str = "raffle:session:",
        commands: RedisCommands,
        news: IdNews | None = None,
        keep: float = 0.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._redis = redis
        self._clock = clock
        self._prefix = prefix
        self._commands = commands  # the touch of every request
        self._news, self._keep, self._monotonic = news, keep, monotonic
        self._copies: OrderedDict[str, tuple[float, Session]] = OrderedDict()
        self._listening = False  # subscribed to the news: copies may be kept
        # Moves on with every piece of news: a touch that started before it may have read
        # what the news ended, and is then not kept.
        self._generation = 0

    async def create(self, session: Session, token_hash: str, ttl_seconds: int) -> None:
        value = json.dumps({"user_id": session.user_id, "is_admin": session.is_admin})
        key, sessions = self._prefix + token_hash, self._of_user(session.user_id)
        await self._forget_expired(sessions)
        # Set, then listed: a listed key that does not exist has expired, and another
        # sign-in of the user forgets it. A session that could not be listed is undone.
        await self._redis.set(key, value, ex=ttl_seconds)
        try:
            await self._redis.sadd(sessions, key)
        except BaseException:
            await self._redis.delete(key)
            raise

    async def touch(self, token_hash: str, ttl_seconds: int) -> Session | None:
        if (copy := self._copies.get(token_hash)) is not None:
            if copy[0] > self._monotonic():
                self._copies.move_to_end(token_hash)
                return copy[1]
            del self._copies[token_hash]
        generation, read_at = self._generation, self._monotonic()
        # GETEX reads and slides the expiry in one round trip.
        value = await self._commands.execute("GETEX", self._prefix + token_hash, "EX", ttl_seconds)
        if value is None:
            return None
        fields = json.loads(value)
        if fields.get("ended"):
            raise SessionEnded(ENDED)
        session = Session(
            user_id=fields["user_id"],
            is_admin=fields["is_admin"],
            expires_at=self._clock.now() + timedelta(seconds=ttl_seconds),
        )
        if self._listening and generation == self._generation:
            self._copies[token_hash] = (read_at + min(self._keep, ttl_seconds), session)
            if len(self._copies) > COPIES:
                self._copies.popitem(last=False)
        return session

    async def delete(self, token_hash: str) -> None:
        await self._redis.delete(self._prefix + token_hash)
        await self._ended([token_hash])

    async def end_all(self, user_id: str) -> int:
        """Each session's value becomes the mark of an ended one, its expiry kept (XX: a
        session that expired meanwhile is not brought back)."""
        sessions = self._of_user(user_id)
        keys = await self._members(sessions)
        ended = 0
        if keys:
            async with self._redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.execute_command("SET", key, _ENDED_MARK, "XX", "KEEPTTL")
                ended = sum(bool(answer) for answer in await pipe.execute())
            await self._redis.srem(sessions, *keys)
            await self._ended([key.removeprefix(self._prefix) for key in keys])
        return ended

    async def delete_expired(self) -> int:
        return 0  # Redis expires the keys itself

    async def watch(self) -> None:
        """Forget the copies of the sessions the news says ended, until cancelled; copies
        are kept only while subscribed."""
        if self._news is None or self._keep <= 0:
            return
        try:
            await forget_on_news(self._news, self._forget, "sessions", self._hearing)
        finally:
            self._hearing(False)
            self._forget(None)

    def _hearing(self, heard: bool) -> None:
        self._listening = heard

    async def _ended(self, token_hashes: list[str]) -> None:
        """Forgotten here at once, and announced to the other processes (a copy elsewhere
        that misses it lives out its `keep`)."""
        self._forget(token_hashes)
        if self._news is not None and token_hashes:
            await tell_ids(self._news, token_hashes)

    def _forget(self, token_hashes: Collection[str] | None) -> None:
        self._generation += 1
        if token_hashes is None:
            self._copies.clear()
            return
        for token_hash in token_hashes:
            self._copies.pop(token_hash, None)

    def _of_user(self, user_id: str) -> str:
        return f"{self._prefix}user:{user_id}"

    async def _forget_expired(self, sessions: str) -> None:
        keys = await self._members(sessions)
        gone = [
            k for k, alive in zip(keys, await self._each(keys, "EXISTS"), strict=True) if not alive
        ]
        if gone:
            await self._redis.srem(sessions, *gone)

    async def _members(self, sessions: str) -> list[str]:
        return [_text(key) for key in await self._redis.smembers(sessions)]

    async def _each(self, keys: list[str], command: str) -> list[int]:
        """`command` on each key, in one round trip (not one transaction: in a cluster the
        keys may live on different nodes)."""
        if not keys:
            return []
        async with self._redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.execute_command(command, key)
            return [int(answer) for answer in await pipe.execute()]


_ENDED_MARK = json.dumps({"ended": True})


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
