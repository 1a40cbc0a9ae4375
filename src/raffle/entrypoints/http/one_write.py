"""uvicorn's HTTP protocol on a transport that sends the writes of one turn of the loop at once."""

# uvicorn writes a response's head and its body in two socket writes: two packets, and on a
# loopback or virtual network the client is woken twice. The protocol is uvicorn's own,
# unchanged; only the transport it is given (asyncio's public Transport interface) holds the
# writes until the callback that made them is done, then sends them in one.

from __future__ import annotations

import asyncio
from typing import Any, cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

HOLD_BYTES = 65_536  # a long body streamed in one callback goes out in pieces of about this


class JoinedWrites(asyncio.Transport):
    """A transport whose writes wait for the end of the loop's current callback and then go
    as one write of the transport underneath; closing sends what is held first."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []
        self._held_bytes = 0
        self._sending = False  # a send is scheduled

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        self._held.append(data if isinstance(data, bytes) else bytes(data))
        self._held_bytes += len(data)
        if self._held_bytes >= HOLD_BYTES:
            self._send()
        elif not self._sending:
            self._sending = True
            self._loop.call_soon(self._send)

    def writelines(self, list_of_data: Any) -> None:
        for data in list_of_data:
            self.write(data)

    def _send(self) -> None:
        self._sending = False
        if not self._held:
            return
        held = self._held[0] if len(self._held) == 1 else b"".join(self._held)
        self._held, self._held_bytes = [], 0
        if not self._transport.is_closing():
            self._transport.write(held)

    def close(self) -> None:
        self._send()
        self._transport.close()

    def abort(self) -> None:
        self._held, self._held_bytes = [], 0
        self._transport.abort()

    def write_eof(self) -> None:
        self._send()
        self._transport.write_eof()

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def get_write_buffer_size(self) -> int:
        return self._held_bytes + self._transport.get_write_buffer_size()

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()


class OneWriteHttp(asyncio.Protocol):
    """uvicorn's httptools protocol (made with the arguments uvicorn gives its protocol class),
    on JoinedWrites: `uvicorn.run(..., http=OneWriteHttp)`."""

    def __init__(self, **kwargs: Any) -> None:
        self._http = HttpToolsProtocol(**kwargs)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports have the interface without being asyncio.Transport subclasses.
        joined = JoinedWrites(cast(asyncio.Transport, transport), asyncio.get_running_loop())
        self._http.connection_made(joined)

    def data_received(self, data: bytes) -> None:
        self._http.data_received(data)

    def eof_received(self) -> None:
        self._http.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._http.connection_lost(exc)

    def pause_writing(self) -> None:
        self._http.pause_writing()

    def resume_writing(self) -> None:
        self._http.resume_writing()
