"""uvicorn's httptools protocol with a response's writes joined into one send.

uvicorn writes the status line and headers when the app sends `http.response.start`, and
the body when it sends `http.response.body`: two `send` syscalls a response (on this VM
each is several µs of system CPU, and a segment more for the client to read). Writes made
in the same turn of the event loop are joined here and written once at the end of the
turn, so an answer sent whole (start, then its one body message) leaves in one write.
A streamed body still goes as it is sent: each turn's writes leave at its end."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class JoinedWrites:
    """The connection's transport, its writes held until the end of the loop's turn."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop  # not looked up per write: Python 3.11's lookup calls getpid()
        self._held: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._held:
            self._loop.call_soon(self.flush)
        self._held.append(bytes(data))

    def flush(self) -> None:
        held, self._held = self._held, []
        if held and not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def close(self) -> None:
        self.flush()  # a response's last bytes go before the close (keep-alive off)
        self._transport.close()

    def __getattr__(self, name: str) -> Any:  # reading, flow control, extra info: as is
        return getattr(self._transport, name)


class JoinedWritesProtocol(HttpToolsProtocol):
    """`uvicorn --http raffle.entrypoints.http.protocol:JoinedWritesProtocol`."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        joined: Any = JoinedWrites(transport, self.loop)  # a Transport in all that uvicorn uses
        super().connection_made(joined)
