"""The hang watch of the test harness: what it writes about a hung test, and that it ends it."""

from __future__ import annotations

import asyncio
import io
from types import SimpleNamespace
from typing import Any

import pytest

from tests.hang_watch import _dump_tasks_and_cancel


async def test_a_hung_test_is_told_down_to_the_awaited_future_and_cancelled() -> None:
    gate = asyncio.Event()

    async def waiting_for_the_gate() -> None:
        await gate.wait()

    async def test_stuck() -> None:
        await asyncio.create_task(waiting_for_the_gate(), name="helper")

    stuck = asyncio.create_task(test_stuck())
    await asyncio.sleep(0.01)  # both tasks now wait
    out = io.StringIO()
    item: Any = SimpleNamespace(
        originalname="test_stuck", name="test_stuck[x]", nodeid="t.py::test_stuck[x]"
    )
    _dump_tasks_and_cancel(item, out)
    with pytest.raises(asyncio.CancelledError):  # not TimeoutError: it was cancelled
        await asyncio.wait_for(stuck, 5)
    gate.set()
    told = out.getvalue()
    lines = told.splitlines()
    helper = next(
        i for i, line in enumerate(lines) if line.startswith("<Task pending name='helper'")
    )
    chain = lines[helper + 1 : helper + 4]
    assert "in waiting_for_the_gate" in chain[0]
    assert "locks.py" in chain[1]  # Event.wait
    assert chain[2].strip().startswith("awaiting <")
    assert f"cancelling {stuck.get_name()}" in told
    assert "cancelling" not in told.replace(f"cancelling {stuck.get_name()}", "")
