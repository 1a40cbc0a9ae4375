"""Idempotency-Key records on every database: reserve, replay, refuse, take over, sweep."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.repositories.idempotency import IN_FLIGHT_SECONDS, SqlIdempotencyStore
from raffle.adapters.sql.unit_of_work import create_engine
from raffle.service.idempotency import KeyInFlight, KeyReused
from tests.unit.fakes import FakeClock


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade(database_url)
    engine = create_engine(database_url)
    yield engine
    await engine.dispose()


async def test_a_key_replays_its_first_answer_and_refuses_other_requests(
    engine: AsyncEngine,
) -> None:
    store = SqlIdempotencyStore(engine, FakeClock())
    assert await store.begin("alice", "k", "hash-1") is None
    with pytest.raises(KeyInFlight):
        await store.begin("alice", "k", "hash-1")
    await store.finish("alice", "k", 201, '{"ok": true}')
    assert await store.begin("alice", "k", "hash-1") == (201, '{"ok": true}')
    with pytest.raises(KeyReused):
        await store.begin("alice", "k", "hash-2")
    assert await store.begin("bob", "k", "hash-2") is None  # keys belong to their user


async def test_an_abandoned_or_stale_reservation_can_be_taken_over(engine: AsyncEngine) -> None:
    clock = FakeClock()
    store = SqlIdempotencyStore(engine, clock)
    assert await store.begin("alice", "a", "h") is None
    await store.abandon("alice", "a")
    assert await store.begin("alice", "a", "h") is None
    assert await store.begin("alice", "b", "h") is None
    clock.advance(IN_FLIGHT_SECONDS + 1)  # the first request died long ago
    assert await store.begin("alice", "b", "h") is None
    with pytest.raises(KeyInFlight):
        await store.begin("alice", "b", "h")


async def test_old_keys_are_swept(engine: AsyncEngine) -> None:
    clock = FakeClock()
    store = SqlIdempotencyStore(engine, clock)
    assert await store.begin("alice", "old", "h") is None
    await store.finish("alice", "old", 200, "{}")
    clock.advance(3600)
    assert await store.begin("alice", "new", "h") is None
    assert await store.delete_older(clock.now() - timedelta(minutes=30)) == 1
    assert await store.begin("alice", "old", "h") is None  # forgotten: runs again
    with pytest.raises(KeyInFlight):
        await store.begin("alice", "new", "h")
