"""A test that hangs explains itself. Past ``RAFFLE_TEST_HANG_SECONDS`` (default 300) the
stack of every thread (faulthandler) and the await chain of every asyncio task are written
to the terminal, and the test's own task is cancelled, so the test fails and the run goes on.
A test still running as long again after its cancel stops the run (exit code 70): CI's time
limit would otherwise end it later, with less said.

Written to a copy of the stderr pytest started with: what a test prints is captured, and a
run killed by CI's time limit would take the captured output with it. On a green run it
costs a timer per test.
"""

from __future__ import annotations

import asyncio
import faulthandler
import gc
import os
import sys
import threading
from collections.abc import Iterator
from typing import TextIO

import pytest

HANG_SECONDS = float(os.environ.get("RAFFLE_TEST_HANG_SECONDS", "300"))

TERMINAL = pytest.StashKey[TextIO]()


def pytest_configure(config: pytest.Config) -> None:
    # Capturing is suspended while plugins configure: fd 2 is the terminal here.
    terminal = config.stash[TERMINAL] = os.fdopen(os.dup(sys.stderr.fileno()), "w", buffering=1)
    config.add_cleanup(terminal.close)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    ended = threading.Event()
    watch = threading.Timer(HANG_SECONDS, _hung, (item, ended))
    watch.daemon = True
    watch.start()
    try:
        return (yield)
    finally:
        ended.set()
        watch.cancel()


def _hung(item: pytest.Item, ended: threading.Event) -> None:
    """On the timer's thread: the threads now, then the tasks from the loop's own thread
    (the loop answers: a hang in an await leaves it idle)."""
    out = item.config.stash[TERMINAL]
    print(f"\n==== {item.nodeid} still running after {HANG_SECONDS:g}s ====", file=out)
    faulthandler.dump_traceback(file=out, all_threads=True)
    # Found among all objects, not through the main thread's frames: reading another
    # thread's frame locals is not safe while it runs.
    loops = [o for o in gc.get_objects() if isinstance(o, asyncio.BaseEventLoop)]
    for loop in (loop for loop in loops if loop.is_running()):
        loop.call_soon_threadsafe(_dump_tasks_and_cancel, item, out)
        break
    else:
        print("==== no event loop running ====", file=out)
    last = threading.Timer(HANG_SECONDS, _still_hung, (item, ended))
    last.daemon = True
    last.start()


def _still_hung(item: pytest.Item, ended: threading.Event) -> None:
    if ended.is_set():
        return
    out = item.config.stash[TERMINAL]
    print(f"\n==== {item.nodeid} still running after its cancel ====", file=out)
    faulthandler.dump_traceback(file=out, all_threads=True)
    print(f"==== {item.nodeid} hung: the run stops here ====", file=out)
    out.flush()
    os._exit(70)


def _dump_tasks_and_cancel(item: pytest.Item, out: TextIO) -> None:
    tasks = asyncio.all_tasks()
    print(f"==== {len(tasks)} asyncio tasks, innermost await last ====", file=out)
    for task in tasks:
        print(f"{task!r}", file=out)
        for line in _await_chain(task):
            print(line, file=out)
    # The test's task (or its fixture's): the one running its coroutine, not the ones it made.
    name = getattr(item, "originalname", item.name)
    for task in tasks:
        code = getattr(task.get_coro(), "cr_code", None)
        if code is not None and (code.co_name == name or "pytest_asyncio" in code.co_filename):
            print(f"==== cancelling {task.get_name()} ====", file=out)
            task.cancel(f"hung for {HANG_SECONDS:g}s (see the stacks above)")
    print(f"==== end of the tasks of {item.nodeid} ====", file=out)


def _await_chain(task: asyncio.Task[object]) -> list[str]:
    """Where each coroutine of the task stands, outermost first: the task's own stack shows
    only the outermost, as a suspended coroutine's frame has no f_back."""
    lines = []
    awaited: object = task.get_coro()
    while awaited is not None:
        frame = next(
            (f for a in ("cr_frame", "gi_frame", "ag_frame") if (f := getattr(awaited, a, None))),
            None,
        )
        if frame is None:  # a future, or what hides its coroutine (an async generator's asend)
            lines.append(f"    awaiting {awaited!r}")
            break
        code = frame.f_code
        lines.append(f'  File "{code.co_filename}", line {frame.f_lineno}, in {code.co_name}')
        awaited = next(
            (
                w
                for a in ("cr_await", "gi_yieldfrom", "ag_await")
                if (w := getattr(awaited, a, None))
            ),
            None,
        )
    return lines
