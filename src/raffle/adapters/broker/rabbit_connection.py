"""aio-pika's robust connection, with a close that cannot hang: past its time, the socket is
cut. The broker keeps what it gave a connection (its unacknowledged messages) for as long as
the connection lives; a close it never answers would strand them until the process exits."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

import aio_pika
from aiormq.connection import TCPTransportFactory, TLSTransportFactory, TransportFactory
from yarl import URL

_CLOSING: set[asyncio.Future[None]] = set()  # closes still running, kept from the collector


async def finished_within(seconds: float, close: Awaitable[None]) -> bool:
    """Whether `close` finished within `seconds` (raising what it raised). Past them it is
    left running, not cancelled: aiormq's close waits for its writer, and the writer for the
    socket's last bytes, whatever cancels it; a cut socket ends it."""
    closing = asyncio.ensure_future(close)
    _CLOSING.add(closing)
    closing.add_done_callback(_closed)
    await asyncio.wait([closing], timeout=seconds)
    if closing.done():
        closing.result()
        return True
    return False


def _closed(closing: asyncio.Future[None]) -> None:
    _CLOSING.discard(closing)
    if not closing.cancelled():
        closing.exception()  # retrieved: a close that failed after nobody waited for it


class Sockets(TransportFactory):
    """Opens the connection's sockets as aiormq would, and keeps the newest one's transport:
    aiormq keeps its stream writer to itself, and the transport is what can be cut."""

    def __init__(self) -> None:
        self.transport: asyncio.WriteTransport | None = None

    async def create(
        self, url: URL, **kwargs: Any
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        opening = TLSTransportFactory() if url.scheme == "amqps" else TCPTransportFactory()
        reader, writer = await opening.create(url, **kwargs)
        self.transport = writer.transport
        return reader, writer


class CuttableConnection(aio_pika.RobustConnection):
    """Reconnects after a lost socket (a broker restart) like any robust connection, but
    not after `close_within`: a connection that would not close is given up for good, and
    its owner opens a fresh one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sockets = Sockets()
        self.kwargs["transport_factory"] = self.sockets  # handed to aiormq at each connect

    async def close_within(self, seconds: float) -> None:
        """Closed, or after `seconds` cut: the socket aborted, so the broker sees the
        connection lost and gives out again what it had given it. close() stops the
        reconnecting first thing, so the cut is final."""
        if not await finished_within(seconds, self.close()) and self.sockets.transport:
            self.sockets.transport.abort()
