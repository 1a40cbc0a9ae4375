"""aio-pika's robust connection, with a close that cannot hang: past its time, the socket is
cut. The broker keeps what it gave a connection (its unacknowledged messages) for as long as
the connection lives; a close it never answers would strand them until the process exits."""

from __future__ import annotations

import asyncio
from typing import Any

import aio_pika
from aiormq.connection import TCPTransportFactory, TLSTransportFactory, TransportFactory
from yarl import URL


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
        self._sockets = Sockets()
        self.kwargs["transport_factory"] = self._sockets  # handed to aiormq at each connect

    async def close_within(self, seconds: float) -> None:
        """Closed, or after `seconds` cut: the socket aborted, so the broker sees the
        connection lost and gives out again what it had given it. close() has stopped the
        reconnecting (first thing it does) before it can time out, so the cut is final."""
        try:
            async with asyncio.timeout(seconds):
                await self.close()
        except TimeoutError:
            if self._sockets.transport is not None:
                self._sockets.transport.abort()
