"""Loops that start again after a failure stop when cancelled, even when the cancel turns
into another error on its way out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from raffle.entrypoints.worker import _forever
from raffle.service.news import follow


async def _closing_badly(times: int) -> None:
    """Waits; cancelled, its close fails, and the failure replaces the cancel. Started a
    second time (the loop went on after its cancel) it ends the loop: a test that fails, not
    one that hangs."""
    if times > 1:
        raise asyncio.CancelledError
    try:
        await asyncio.Event().wait()
    finally:
        raise ConnectionError("the close found the connection gone")


async def _ended_by_cancel(task: asyncio.Task[None]) -> None:
    await asyncio.sleep(0.05)  # started and waiting
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_worker_part_whose_close_fails_as_it_is_cancelled_stops() -> None:
    starts = 0

    async def part() -> None:
        nonlocal starts
        starts += 1
        await _closing_badly(starts)

    await _ended_by_cancel(asyncio.create_task(_forever(part)))
    assert starts == 1


class _News:
    def __init__(self) -> None:
        self.subscriptions = 0

    async def announce(self, version: int) -> None:
        return None

    async def changes(self) -> AsyncIterator[None]:
        self.subscriptions += 1
        yield
        await _closing_badly(self.subscriptions)


async def test_following_news_whose_close_fails_as_it_is_cancelled_stops() -> None:
    news, refreshed = _News(), []

    async def refresh() -> None:
        refreshed.append(1)

    await _ended_by_cancel(asyncio.create_task(follow(news, refresh, "test")))
    assert news.subscriptions == 1
    assert len(refreshed) == 1
