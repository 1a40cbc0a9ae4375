"""A bounded close: waited for up to its bound, then left running (a close aiormq cannot
have cancelled in time), never cancelled; its failure is its caller's when it ends in time.
Heartbeats: the publish timeout's, unless the broker URL names its own."""

from __future__ import annotations

import asyncio

import pytest

from raffle.adapters.broker.rabbit_connection import (
    SHORTEST_HEARTBEAT,
    finished_within,
    with_heartbeat,
)


async def test_a_close_past_its_bound_is_left_running_and_ends_by_itself() -> None:
    let_go = asyncio.Event()
    ended: list[str] = []

    async def close() -> None:
        await let_go.wait()  # a socket's last bytes that never leave, until it is cut
        ended.append("closed")

    assert not await finished_within(0.01, close())
    let_go.set()  # the cut
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert ended == ["closed"]  # was not cancelled


async def test_a_close_within_its_bound_finishes_or_raises_its_error() -> None:
    async def close() -> None:
        return None

    async def failing() -> None:
        raise ConnectionResetError("gone")

    assert await finished_within(1, close())
    with pytest.raises(ConnectionResetError):
        await finished_within(1, failing())


def test_a_connection_beats_at_the_publish_timeout_unless_its_url_says_otherwise() -> None:
    url = "amqp://guest:guest@127.0.0.1:5672/"
    assert with_heartbeat(url, 10) == url + "?heartbeat=10"
    assert with_heartbeat(url, 2.5) == url + "?heartbeat=3"  # whole seconds, rounded up
    assert with_heartbeat(url, 0.5) == url + f"?heartbeat={SHORTEST_HEARTBEAT}"
    assert with_heartbeat(url + "?heartbeat=30", 10) == url + "?heartbeat=30"
    assert with_heartbeat(url + "?name=relay", 10) == url + "?name=relay&heartbeat=10"
