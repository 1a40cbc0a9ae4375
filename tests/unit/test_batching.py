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
