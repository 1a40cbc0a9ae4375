"""Loops that start again after a failure still stop when they are asked to."""

from __future__ import annotations

import asyncio


def stop_if_asked() -> None:
    """Raise CancelledError if the running task was cancelled. On its way out a cancel can
    turn into another error (a connection's close failing in a `finally` replaces it), and a
    loop that catches that error to start again would then never end: its cancel was spent."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
