"""Group commit: items that arrive while a batch is in flight go together in the next."""

from __future__ import annotations

import asyncio
import random
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


class Flights:
    """Holds every batch until `release(n)`; records the batches and what was in flight."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.gates: list[asyncio.Event] = []
        self.flying: list[list[str]] = []  # the batches in flight now

    async def __call__(self, items: Sequence[str]) -> list[str | Exception]:
        batch = list(items)
        self.batches.append(batch)
        self.gates.append(gate := asyncio.Event())
        self.flying.append(batch)
        await gate.wait()
        self.flying.remove(batch)
        return [i * 2 for i in items]

    def release(self, n: int) -> None:
        self.gates[n].set()


async def test_with_two_flights_an_item_goes_while_a_batch_is_in_flight() -> None:
    together = Flights()
    group = GroupCommit(together, size=8, key=_key, flights=2)
    first = asyncio.create_task(group.submit("a"))
    await settle()
    second = [asyncio.create_task(group.submit(i)) for i in ("b", "c")]
    await settle()
    assert together.flying == [["a"], ["b", "c"]]  # not behind "a"
    third = asyncio.create_task(group.submit("d"))
    await settle()
    assert together.batches == [["a"], ["b", "c"]]  # both flights taken: "d" waits
    together.release(1)
    assert await asyncio.gather(*second) == ["bb", "cc"]
    await settle()
    assert together.flying == [["a"], ["d"]]  # the freed flight takes it
    together.release(0)
    together.release(2)
    assert [await first, await third] == ["aa", "dd"]


async def test_two_flights_never_hold_one_key_and_a_key_keeps_its_order() -> None:
    together = Flights()
    group = GroupCommit(together, size=8, key=_key, flights=2)
    first = asyncio.create_task(group.submit("a.1"))
    await settle()
    later = [asyncio.create_task(group.submit(i)) for i in ("a.2", "b", "a.3")]
    await settle()
    assert together.flying == [["a.1"], ["b"]]  # "a.2" and "a.3" wait for "a.1"
    together.release(1)
    await settle()
    assert together.flying == [["a.1"]]  # a free flight, but nothing it may take
    together.release(0)
    await settle()
    assert together.flying == [["a.2"]]
    together.release(2)
    await settle()
    together.release(3)
    assert await first == "a.1a.1"
    assert await asyncio.gather(*later) == ["a.2a.2", "bb", "a.3a.3"]
    assert together.batches == [["a.1"], ["b"], ["a.2"], ["a.3"]]


async def test_hundreds_in_flight_over_two_flights_all_answered_keys_never_twice() -> None:
    rng = random.Random(7)
    flying: list[list[str]] = []
    seen: list[str] = []  # the items in the order their batches began
    submitted: list[str] = []
    most = 0

    async def together(items: Sequence[str]) -> list[str]:
        keys = [_key(i) for i in items]
        assert len(flying) < 2
        assert not {k for batch in flying for k in map(_key, batch)} & set(keys)
        flying.append(batch := list(items))
        nonlocal most
        most = max(most, len(flying))
        seen.extend(items)
        await asyncio.sleep(rng.random() / 1000)
        flying.remove(batch)
        return [i * 2 for i in items]

    group = GroupCommit(together, size=16, key=_key, flights=2)
    items = [f"u{rng.randrange(40)}.{n}" for n in range(600)]

    async def one(item: str) -> str:
        await asyncio.sleep(rng.random() / 100)
        submitted.append(item)
        return await group.submit(item)

    answers = await asyncio.gather(*(one(i) for i in items))
    assert answers == [i * 2 for i in items]
    assert most == 2
    for user in {_key(i) for i in items}:  # a key's items went in the order they came
        assert [i for i in seen if _key(i) == user] == [i for i in submitted if _key(i) == user]
