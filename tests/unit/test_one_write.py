"""JoinedWrites: the writes of one callback go to the transport underneath as one."""

from __future__ import annotations

import asyncio
from typing import Any

from raffle.entrypoints.http.one_write import HOLD_BYTES, JoinedWrites


class Recorded:
    """A transport that records what it is asked to do."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.calls: list[str] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)
        self.calls.append("write")

    def close(self) -> None:
        self.closing = True
        self.calls.append("close")

    def abort(self) -> None:
        self.closing = True
        self.calls.append("abort")

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return 7

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 4321)}.get(name, default)


def _joined(recorded: Recorded) -> JoinedWrites:
    return JoinedWrites(recorded, asyncio.get_running_loop())  # type: ignore[arg-type]


def test_the_writes_of_one_callback_go_as_one_write_once_it_is_done() -> None:
    async def scenario() -> None:
        recorded = Recorded()
        joined = _joined(recorded)
        head = b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n"
        joined.write(head)
        joined.write(bytearray(b"{}"))
        assert recorded.writes == []
        assert joined.get_write_buffer_size() == 7 + len(head) + 2
        await asyncio.sleep(0)
        assert recorded.writes == [b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n{}"]
        joined.write(b"next")
        await asyncio.sleep(0)
        assert recorded.writes[1:] == [b"next"]

    asyncio.run(scenario())


def test_a_long_body_goes_as_soon_as_enough_is_held() -> None:
    async def scenario() -> None:
        recorded = Recorded()
        joined = _joined(recorded)
        joined.writelines([b"head", b"x" * HOLD_BYTES])
        assert recorded.writes == [b"head" + b"x" * HOLD_BYTES]  # before the loop turns
        await asyncio.sleep(0)
        assert len(recorded.writes) == 1

    asyncio.run(scenario())


def test_closing_sends_what_is_held_first_and_aborting_drops_it() -> None:
    async def scenario() -> None:
        closed = Recorded()
        joined = _joined(closed)
        joined.write(b"last answer")
        joined.close()
        assert closed.calls == ["write", "close"]
        assert closed.writes == [b"last answer"]
        await asyncio.sleep(0)
        assert closed.calls == ["write", "close"]  # nothing more once closed

        aborted = Recorded()
        joined = _joined(aborted)
        joined.write(b"never sent")
        joined.abort()
        await asyncio.sleep(0)
        assert aborted.calls == ["abort"]
        assert joined.get_extra_info("peername") == ("127.0.0.1", 4321)

    asyncio.run(scenario())
