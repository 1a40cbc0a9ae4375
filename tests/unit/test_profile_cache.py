"""The per-process copies of profiles: read once, kept until news, a time to live or room
runs out; a read that races a change never keeps the old profile."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Collection

from raffle.domain.profiles import Profile
from raffle.service.profile_cache import CachedProfiles


class Store:
    def __init__(self) -> None:
        self.rows: dict[str, Profile] = {}
        self.reads = 0
        self.gate: asyncio.Event | None = None  # set: reads wait for it
        self.reading = asyncio.Event()

    async def read(self, user_id: str) -> Profile | None:
        self.reads += 1
        self.reading.set()
        found = self.rows.get(user_id)
        if self.gate is not None:
            await self.gate.wait()
        return found


class News:
    def __init__(self) -> None:
        self.announced: list[Collection[str] | None] = []
        self.queue: asyncio.Queue[Collection[str] | None] = asyncio.Queue()
        self.listening = asyncio.Event()  # what was yielded before is handled

    async def announce(self, user_ids: Collection[str] | None) -> None:
        self.announced.append(user_ids)

    async def changes(self) -> AsyncIterator[Collection[str] | None]:
        yield None
        while True:
            self.listening.set()
            yield await self.queue.get()


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def cache(ttl: float = 60.0, size: int = 100) -> tuple[CachedProfiles, Store, News, Clock]:
    store, news, clock = Store(), News(), Clock()
    return CachedProfiles(store.read, news, ttl=ttl, size=size, monotonic=clock), store, news, clock


async def test_a_profile_is_read_once_then_kept_and_a_missing_one_is_empty() -> None:
    profiles, store, _, _ = cache()
    store.rows["alice"] = Profile("alice", level=3)
    for _ in range(100):
        assert await profiles.of("alice") == Profile("alice", level=3)
        assert await profiles.of("bob") == Profile("bob")
    assert store.reads == 2


async def test_a_change_here_is_forgotten_at_once_and_announced() -> None:
    profiles, store, news, _ = cache()
    store.rows["alice"] = Profile("alice", level=1)
    await profiles.of("alice")
    store.rows["alice"] = Profile("alice", level=2)
    await profiles.changed(["alice"])
    assert (await profiles.of("alice")).level == 2
    assert news.announced == [["alice"]]


async def test_news_from_elsewhere_forgets_the_users_named_or_everyone() -> None:
    profiles, store, news, _ = cache()
    store.rows = {"alice": Profile("alice", level=1), "bob": Profile("bob", level=1)}
    watching = asyncio.create_task(profiles.watch())
    try:
        await news.listening.wait()
        await profiles.of("alice"), await profiles.of("bob")
        store.rows = {"alice": Profile("alice", level=2), "bob": Profile("bob", level=2)}
        await _say(news, ["alice"])
        assert (await profiles.of("alice")).level == 2
        assert (await profiles.of("bob")).level == 1  # not named: kept
        await _say(news, None)
        assert (await profiles.of("bob")).level == 2
    finally:
        watching.cancel()


async def _say(news: News, user_ids: Collection[str] | None) -> None:
    """Publish, and wait until the watcher handled it (it asks for the next piece then)."""
    news.listening.clear()
    await news.queue.put(user_ids)
    await news.listening.wait()


async def test_a_read_that_began_before_news_does_not_keep_the_old_profile() -> None:
    profiles, store, _, _ = cache()
    store.rows["alice"] = Profile("alice", level=1)
    store.gate = asyncio.Event()
    reading = asyncio.create_task(profiles.of("alice"))
    await store.reading.wait()
    store.rows["alice"] = Profile("alice", level=2)  # committed while the read was out
    profiles.forget(["alice"])
    store.gate.set()
    assert (await reading).level == 1  # what it read, answered once
    assert (await profiles.of("alice")).level == 2  # but not kept
    assert store.reads == 2


async def test_a_copy_lives_at_most_its_time_and_room_is_bounded() -> None:
    profiles, store, _, clock = cache(ttl=5.0, size=2)
    store.rows["alice"] = Profile("alice", level=1)
    await profiles.of("alice")
    store.rows["alice"] = Profile("alice", level=2)
    clock.now = 4.9
    assert (await profiles.of("alice")).level == 1
    clock.now = 5.0
    assert (await profiles.of("alice")).level == 2
    reads = store.reads
    await profiles.of("bob"), await profiles.of("carol")  # alice is the least recent
    await profiles.of("alice")
    assert store.reads == reads + 3


async def test_when_the_news_fails_everything_is_forgotten() -> None:
    class Broken(News):
        async def changes(self) -> AsyncIterator[Collection[str] | None]:
            yield None
            raise ConnectionError("redis went away")

    store = Store()
    store.rows["alice"] = Profile("alice", level=1)
    profiles = CachedProfiles(store.read, Broken(), ttl=60)
    await profiles.of("alice")
    watching = asyncio.create_task(profiles.watch())
    try:
        store.rows["alice"] = Profile("alice", level=2)
        for _ in range(20):
            await asyncio.sleep(0)
        assert (await profiles.of("alice")).level == 2
    finally:
        watching.cancel()


async def test_reads_of_one_user_at_once_share_one_database_read() -> None:
    profiles, store, _, _ = cache()
    store.rows["alice"] = Profile("alice", level=1)
    store.gate = asyncio.Event()
    waiting = [asyncio.create_task(profiles.of("alice")) for _ in range(200)]
    await store.reading.wait()
    waiting[0].cancel()  # one caller gone: the read goes on for the others
    store.gate.set()
    answers = await asyncio.gather(*waiting[1:])
    assert {a.level for a in answers} == {1}
    assert store.reads == 1
