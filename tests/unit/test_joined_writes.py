"""The HTTP protocol's transport joins the writes of one loop turn into one write."""

from __future__ import annotations

import asyncio
from typing import Any

from raffle.entrypoints.http.protocol import JoinedWrites


class _Transport:
    """Records each write as the socket would get it."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed, "written after close"
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str) -> Any:
        return f"info:{name}"


async def _turn() -> None:
    await asyncio.sleep(0)


async def test_headers_and_body_of_one_turn_leave_in_one_write() -> None:
    transport = _Transport()
    joined = JoinedWrites(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
    joined.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
    joined.write(b"{}")
    assert transport.writes == []  # held until the turn ends
    await _turn()
    assert transport.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"]


async def test_writes_of_later_turns_leave_in_order_each_at_its_turns_end() -> None:
    transport = _Transport()
    joined = JoinedWrites(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
    joined.write(b"head")
    await _turn()
    joined.write(b"chunk1")
    await _turn()
    joined.write(b"chunk2")
    joined.write(bytearray(b"end"))
    await _turn()
    assert transport.writes == [b"head", b"chunk1", b"chunk2end"]


async def test_close_sends_what_is_held_first_and_nothing_is_written_after() -> None:
    transport = _Transport()
    joined = JoinedWrites(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
    joined.write(b"last answer")
    joined.close()
    assert (transport.writes, transport.closed) == ([b"last answer"], True)
    await _turn()  # the turn's flush finds nothing left
    assert transport.writes == [b"last answer"]
    assert joined.get_extra_info("peername") == "info:peername"  # the rest passes through
