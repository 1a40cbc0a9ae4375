"""Group commit: items that arrive while a batch is in flight go together in the next."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from raffle.service.group_commit import GroupCommit


class Recorder:
    """Answers each item with itself doubled, or fails the ones named; holds a batch while
    `gate` is closed."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.gate = asyncio.Event()
        self.gate.set()

    async def __call__(self, items: Sequence[str]) -> list[str | Exception]:
        self.batches.append(list(items))
        await self.gate.wait()
        return [ValueError(i) if i.startswith("bad") else i * 2 for i in items]


async def settle() -> None:
    """Lets every task that is ready run until it waits."""
    for _ in range(5):
        await asyncio.sleep(0)


def _key(item: str) -> str:
    return item.split(".", maxsplit=1)[0]  # "a.1" and "a.2" are of one key


async def test_an_item_with_nothing_in_flight_goes_at_once_alone() -> None:
    together = Recorder()
    group = GroupCommit(together, size=8, key=_key)
    assert await group.submit("a") == "aa"
    assert await group.submit("b") == "bb"
    assert together.batches == [["a"], ["b"]]


async def behind_a_held_batch(size: int, later: list[str]) -> tuple[Recorder, list[str]]:
    """`later` submitted while a first batch ("a" alone) is held in flight; the batches made,
    and the answers to `later`."""
    together = Recorder()
    together.gate.clear()
    group = GroupCommit(together, size=size, key=_key)
    first = asyncio.create_task(group.submit("a"))
    await settle()
    assert together.batches == [["a"]]  # in flight, held
    tasks = [asyncio.create_task(group.submit(i)) for i in later]
    await settle()
    together.gate.set()
    assert await first == "aa"
    return together, list(await asyncio.gather(*tasks))


async def test_items_that_arrive_while_a_batch_is_in_flight_go_together() -> None:
    together, answers = await behind_a_held_batch(3, ["b", "c", "d", "e"])
    assert answers == ["bb", "cc", "dd", "ee"]
    assert together.batches == [["a"], ["b", "c", "d"], ["e"]]  # `size` at most


async def test_items_of_one_key_never_share_a_batch() -> None:
    together, _ = await behind_a_held_batch(8, ["b.1", "c", "b.2", "b.3"])
    assert together.batches == [["a"], ["b.1", "c"], ["b.2"], ["b.3"]]


async def test_each_item_gets_its_own_error() -> None:
    group = GroupCommit(Recorder(), size=8, key=_key)
    answers = await asyncio.gather(
        group.submit("a"), group.submit("bad"), group.submit("c"), return_exceptions=True
    )
    assert [type(a).__name__ for a in answers] == ["str", "ValueError", "str"]


async def test_a_batch_that_raises_fails_each_of_its_items_and_the_next_still_goes() -> None:
    calls: list[list[str]] = []

    async def together(items: Sequence[str]) -> list[str | Exception]:
        calls.append(list(items))
        if len(calls) == 1:
            raise ConnectionError("database gone")
        return list(items)

    group = GroupCommit(together, size=8, key=_key)
    with pytest.raises(ConnectionError):
        await group.submit("a")
    assert await group.submit("b") == "b"


class Gated:
    """Like Recorder, with a gate per batch: each batch is held until its own gate opens."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.gates: list[asyncio.Event] = []

    async def __call__(self, items: Sequence[str]) -> list[str | Exception]:
        self.batches.append(list(items))
        gate = asyncio.Event()
        self.gates.append(gate)
        await gate.wait()
        return [i * 2 for i in items]


async def submitted(group: GroupCommit[str, str], items: list[str]) -> list[asyncio.Task[str]]:
    tasks = [asyncio.create_task(group.submit(i)) for i in items]
    await settle()
    return tasks
