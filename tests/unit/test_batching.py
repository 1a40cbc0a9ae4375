"""The consumer's batcher: messages handled one by one, delivered together."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from raffle.domain.draws import OutboxMessage
from raffle.entrypoints.batching import Batcher


def _message(n: int) -> OutboxMessage:
    return OutboxMessage(f"{n:032x}", "award.won", str(n), "{}", datetime(2026, 1, 1, tzinfo=UTC))


async def test_messages_in_flight_go_together_and_each_gets_its_own_answer() -> None:
    batches: list[list[str]] = []

    async def together(messages: Sequence[OutboxMessage]) -> list[Exception | None]:
        batches.append([m.key for m in messages])
        return [ValueError(m.key) if m.key == "3" else None for m in messages]

    batcher = Batcher(together, size=4, wait=0.05)
    answers = await asyncio.gather(
        *(batcher.submit(_message(n)) for n in range(6)), return_exceptions=True
    )
    assert batches == [["0", "1", "2", "3"], ["4", "5"]]  # full at 4; the rest after the wait
    assert [type(a).__name__ for a in answers] == ["NoneType"] * 3 + ["ValueError"] + [
        "NoneType"
    ] * 2


async def test_a_batch_that_fails_fails_each_message() -> None:
    async def together(messages: Sequence[OutboxMessage]) -> list[Exception | None]:
        raise ConnectionError("database gone")

    batcher = Batcher(together, size=10, wait=0.01)
    with pytest.raises(ConnectionError):
        await batcher.submit(_message(1))


async def test_batches_beyond_the_concurrency_wait_and_grow_meanwhile() -> None:
    """At most `concurrency` batches at once: the messages that arrive meanwhile go together
    once one finished (at most `size` of them), not as more batches at once."""
    release = asyncio.Event()
    batches: list[list[str]] = []
    at_once = most_at_once = 0

    async def together(messages: Sequence[OutboxMessage]) -> list[Exception | None]:
        nonlocal at_once, most_at_once
        batches.append([m.key for m in messages])
        at_once += 1
        most_at_once = max(most_at_once, at_once)
        await release.wait()
        at_once -= 1
        return [None] * len(messages)

    batcher = Batcher(together, size=3, wait=0.01, concurrency=2)
    first = [asyncio.create_task(batcher.submit(_message(n))) for n in range(6)]
    await asyncio.sleep(0.05)
    later = [asyncio.create_task(batcher.submit(_message(n))) for n in range(6, 11)]
    await asyncio.sleep(0.05)  # the wait passed twice over: still no third batch
    assert batches == [["0", "1", "2"], ["3", "4", "5"]]
    release.set()
    await asyncio.gather(*first, *later)
    assert batches[2:] == [["6", "7", "8"], ["9", "10"]]
    assert most_at_once == 2
