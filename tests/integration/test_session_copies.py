"""API processes' copies of Redis sessions, on real Redis (one, then a cluster): a session read
once costs no Redis command until its copy is due, and a logout or an account's end in one
process is heard by the others at once; nothing is kept while the news is not heard."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from raffle.adapters.id_news import RedisIdNews
from raffle.adapters.redis_commands import RedisClient, RedisCommands
from raffle.adapters.redis_sessions import RedisSessionStore
from raffle.domain.users import Session, SessionEnded
from raffle.service import auth
from tests.integration.redis_clients import all_nodes, total
from tests.unit.auth_fakes import START, FakeClock

HOUR = 3600
DEADLINE_SECONDS = 10.0  # how long a test waits for news before failing (not a speed bound)
ALICE = Session("alice", False, START)


def _hash(name: str) -> str:
    return auth.token_hash(f"token of {name}")


class Processes:
    """Stores as separate API processes hold them: each its own copies and subscription."""

    def __init__(self, redis: RedisClient, commands: RedisCommands, prefix: str) -> None:
        self.redis, self.commands, self.prefix = redis, commands, prefix
        self.channel = f"test:{uuid.uuid4().hex}"
        self.tasks: list[asyncio.Task[None]] = []

    def store(self, *, keep: float = HOUR) -> RedisSessionStore:
        news = RedisIdNews(self.redis, channel=self.channel)
        return RedisSessionStore(
            self.redis, FakeClock(), prefix=self.prefix, commands=self.commands,
            news=news, keep=keep,
        )  # fmt: skip

    async def start(self, count: int, *, keep: float = HOUR) -> list[RedisSessionStore]:
        """`count` stores, watching, once each is subscribed."""
        started = [self.store(keep=keep) for _ in range(count)]
        self.tasks.extend(asyncio.create_task(s.watch()) for s in started)
        await _until(lambda: self.subscribed(count), "every process subscribed")
        return started

    async def subscribed(self, count: int) -> bool:
        answer = await self.redis.pubsub_numsub(self.channel, **all_nodes(self.redis))
        return int(answer[0][1]) >= count


@pytest.fixture
async def processes(
    redis: RedisClient, redis_commands: RedisCommands, prefix: str
) -> AsyncIterator[Processes]:
    made = Processes(redis, redis_commands, prefix)
    yield made
    for task in made.tasks:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def _until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = asyncio.get_running_loop().time() + DEADLINE_SECONDS
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, f"never saw {what}"
        await asyncio.sleep(0.02)


async def _signed_in(store: RedisSessionStore, name: str) -> None:
    await store.create(Session(name, False, START), _hash(name), HOUR)


async def test_a_session_read_once_is_answered_without_redis(
    processes: Processes, redis_commands: RedisCommands
) -> None:
    (store,) = await processes.start(1)
    await _signed_in(store, "alice")
    assert await store.touch(_hash("alice"), HOUR) is not None
    sent = redis_commands.commands
    answers = await asyncio.gather(*(store.touch(_hash("alice"), HOUR) for _ in range(200)))
    assert {a.user_id for a in answers if a is not None} == {"alice"}
    assert None not in answers
    assert redis_commands.commands == sent  # every one from the copy


async def test_a_logout_in_one_process_reaches_every_other(processes: Processes) -> None:
    leaving, *others = await processes.start(3)
    await _signed_in(leaving, "alice")
    await _signed_in(leaving, "bob")
    for store in others:
        assert await store.touch(_hash("alice"), HOUR) is not None  # now kept there
        assert await store.touch(_hash("bob"), HOUR) is not None
    await leaving.delete(_hash("alice"))
    assert await leaving.touch(_hash("alice"), HOUR) is None  # its own copy, at once
    for store in others:
        await _until(lambda s=store: _gone(s, "alice"), "the logout")
        assert await store.touch(_hash("bob"), HOUR) is not None  # only alice's copy went


async def test_an_ended_account_is_told_so_in_every_process(processes: Processes) -> None:
    ending, other = await processes.start(2)
    await _signed_in(ending, "alice")
    await ending.create(ALICE, _hash("alice, elsewhere"), HOUR)
    for token in ("alice", "alice, elsewhere"):
        assert await other.touch(_hash(token), HOUR) is not None
    assert await ending.end_all("alice") == 2
    for token in ("alice", "alice, elsewhere"):
        await _until(lambda t=token: _ended(other, t), "the end")


async def test_without_the_news_every_touch_reads_redis(processes: Processes) -> None:
    deaf = processes.store()  # never watched: not subscribed
    await _signed_in(deaf, "alice")
    assert await deaf.touch(_hash("alice"), HOUR) is not None
    await processes.redis.delete(processes.prefix + _hash("alice"))  # behind its back
    assert await deaf.touch(_hash("alice"), HOUR) is None


async def test_a_dropped_subscription_forgets_every_copy_and_subscribes_again(
    processes: Processes,
) -> None:
    (store,) = await processes.start(1)
    redis = processes.redis
    await _signed_in(store, "alice")
    assert await store.touch(_hash("alice"), HOUR) is not None
    # The subscription's connection killed on the server, as a Redis restart would; a
    # logout said meanwhile would be lost, so the copy must go.
    killed = await redis.client_kill_filter(_type="pubsub", **all_nodes(redis))
    assert total(killed) >= 1
    await redis.delete(processes.prefix + _hash("alice"))  # a logout nobody heard
    await _until(lambda: _gone(store, "alice"), "the copy forgotten")
    await _until(lambda: processes.subscribed(1), "subscribed again")


async def test_a_copy_lives_its_keep_at_most(processes: Processes) -> None:
    (store,) = await processes.start(1, keep=0.2)
    await _signed_in(store, "alice")
    assert await store.touch(_hash("alice"), HOUR) is not None
    await processes.redis.delete(processes.prefix + _hash("alice"))  # news that was lost
    await asyncio.sleep(0.3)
    assert await store.touch(_hash("alice"), HOUR) is None


async def _gone(store: RedisSessionStore, name: str) -> bool:
    return await store.touch(_hash(name), HOUR) is None


async def _ended(store: RedisSessionStore, name: str) -> bool:
    try:
        await store.touch(_hash(name), HOUR)
    except SessionEnded:
        return True
    return False
