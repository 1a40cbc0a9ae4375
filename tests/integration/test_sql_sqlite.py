"""SQLite transactions on the synchronous connection: waiting for another process's lock and
checkpointing the WAL both happen off the event loop."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sessions import SqlSessionStore
from raffle.adapters.sql import connection as sqlite_connection
from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.tables.config import award, session
from raffle.adapters.sql.transaction import transaction
from raffle.adapters.sql.unit_of_work import create_engine
from raffle.domain.users import Session
from raffle.service.auth import token_hash
from tests.unit.auth_fakes import START, FakeClock

HOUR = 3600


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "raffle.db"


@pytest.fixture
async def engine(path: Path) -> AsyncIterator[AsyncEngine]:
    url = f"sqlite+aiosqlite:///{path}"
    await upgrade(url)
    engine = create_engine(url)
    yield engine
    await engine.dispose()


def _award(award_id: int) -> dict[str, object]:
    return {"award_id": award_id, "kind": "thanks", "title": f"a{award_id}", "config": ""}


async def test_a_writer_waits_for_another_process_lock_without_blocking_the_loop(
    engine: AsyncEngine, path: Path
) -> None:
    other = sqlite3.connect(path, isolation_level=None)  # another process, as SQLite sees it
    other.execute("BEGIN IMMEDIATE")
    ticks = 0

    async def write() -> None:
        async with transaction(engine) as connection:
            await connection.execute(insert(award).values(_award(1)))

    writer = asyncio.create_task(write())
    for _ in range(20):  # 0.2 s: the writer is refused, sleeps on the loop and tries again
        ticks += 1
        await asyncio.sleep(0.01)
    assert not writer.done()
    other.execute("COMMIT")
    other.close()
    await asyncio.wait_for(writer, 5)
    assert ticks == 20
    async with transaction(engine) as connection:
        assert (await connection.execute(select(award.c.title))).scalars().all() == ["a1"]


async def test_the_wal_is_checkpointed_in_a_thread(
    engine: AsyncEngine, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_connection, "CHECKPOINT_SECONDS", 0.0)
    ended = _checkpoints_ended(monkeypatch)
    for award_id in range(1, 4):
        async with transaction(engine) as connection:
            await connection.execute(insert(award).values(_award(award_id)))
        # The checkpoint this commit started ends in its thread before the next commit: one
        # still running then would let that commit start none.
        await asyncio.wait_for(ended.get(), 60)
    # The database file alone, without its WAL, holds what was checkpointed.
    main = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        titles = [row[0] for row in main.execute("SELECT title FROM award ORDER BY award_id")]
    finally:
        main.close()
    assert titles == ["a1", "a2", "a3"]


async def test_a_steady_writer_starts_the_wal_over(
    engine: AsyncEngine, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Back-to-back transactions and a slow disk: the checkpoint beside them never catches
    # up, and without a catch-up in the writer's turn the WAL (which every page read
    # searches) would grow on.
    monkeypatch.setattr(sqlite_connection, "CHECKPOINT_SECONDS", 0.0)
    monkeypatch.setattr(sqlite_connection, "RESTART_FRAMES", 0)
    beside = sqlite_connection.Checkpoints._beside

    def slowly(self: sqlite_connection.Checkpoints) -> int:
        time.sleep(0.05)  # in its thread: the writer goes on meanwhile
        return beside(self)

    monkeypatch.setattr(sqlite_connection.Checkpoints, "_beside", slowly)

    async def write(award_id: int) -> None:
        async with transaction(engine) as connection:
            await connection.execute(insert(award).values(_award(award_id)))
        await asyncio.sleep(0)  # a server's loop turns between requests

    await write(1)
    first, award_id = _wal_salt(path), 1
    deadline = time.monotonic() + 10
    while _wal_salt(path) == first and time.monotonic() < deadline:
        award_id += 1
        await write(award_id)
    assert _wal_salt(path) != first, f"the WAL never restarted in {award_id} transactions"


def _checkpoints_ended(monkeypatch: pytest.MonkeyPatch) -> asyncio.Queue[None]:
    """A queue that gets an item as each checkpoint in a thread ends, once the next commit
    may start another."""
    ended: asyncio.Queue[None] = asyncio.Queue()
    done = sqlite_connection.Checkpoints._done

    def noted(self: sqlite_connection.Checkpoints, future: asyncio.Future[int]) -> None:
        done(self, future)
        ended.put_nowait(None)

    monkeypatch.setattr(sqlite_connection.Checkpoints, "_done", noted)
    return ended


def _wal_salt(path: Path) -> bytes:
    """The WAL header's salts, which change each time the WAL starts over."""
    with open(f"{path}-wal", "rb") as wal:
        return wal.read(24)[16:24]


async def test_reading_a_session_waits_for_no_writer(engine: AsyncEngine, path: Path) -> None:
    clock = FakeClock()
    store = SqlSessionStore(engine, clock)
    token = token_hash("token of alice")
    await store.create(Session("alice", False, START), token, HOUR)
    other = sqlite3.connect(path, isolation_level=None)  # another process, as SQLite sees it
    try:
        other.execute("BEGIN IMMEDIATE")  # holding the write lock
        started = time.monotonic()
        expected = Session("alice", False, START + timedelta(seconds=HOUR))
        assert await store.touch(token, HOUR) == expected
        # Not a speed check: a write would have waited out SQLite's 5 s busy timeout, then
        # failed; half of it tells the two apart on however slow a machine.
        assert time.monotonic() - started < 2.5
        other.execute("ROLLBACK")
    finally:
        other.close()
    clock.advance(HOUR)  # expired: the store deletes it (a write) and refuses it
    assert await store.touch(token, HOUR) is None
    async with transaction(engine) as connection:
        assert (await connection.execute(select(session.c.user_id))).all() == []
