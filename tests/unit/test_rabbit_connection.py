"""A bounded close: waited for up to its bound, then left running (a close aiormq cannot
have cancelled in time), never cancelled; its failure is its caller's when it ends in time."""

from __future__ import annotations

import asyncio

import pytest

from raffle.adapters.broker.rabbit_connection import finished_within


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
