"""A TCP relay to a server, whose connections can be held as a link that stopped carrying the
client's bytes: what the client sends on them is dropped, as by a broker that no longer reads
them, while a connection closed on one side is still closed on the other; or stalled: not
even read."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from yarl import URL


class Relay:
    """`async with Relay(url) as relay:` connect to `relay.url` instead of `url`."""

    def __init__(self, url: str) -> None:
        self._server_url = URL(url)
        self._held: set[asyncio.StreamWriter] = set()  # towards the server
        self._writers: list[asyncio.StreamWriter] = []
        self._clients: list[asyncio.StreamWriter] = []  # back to the clients
        self._links: set[asyncio.Task[Any]] = set()
        self.url = ""

    async def __aenter__(self) -> Relay:
        self._listening = await asyncio.start_server(self._link, "127.0.0.1", 0)
        port = self._listening.sockets[0].getsockname()[1]
        self.url = str(self._server_url.with_port(port))
        return self

    async def __aexit__(self, *_: object) -> None:
        self._listening.close()
        for writer in self._writers:
            writer.close()
        await asyncio.gather(*self._links, return_exceptions=True)
        await self._listening.wait_closed()

    def hold(self) -> None:
        """The connections open now carry nothing more to the server (what the client sends
        is read and dropped); later ones do."""
        self._held.update(self._writers)

    def stall(self) -> None:
        """What the clients send on the connections open now is not even read: it piles up
        in their sockets, as towards a peer that stopped reading."""
        for client in self._clients:
            cast(asyncio.Transport, client.transport).pause_reading()

    async def _link(self, client: asyncio.StreamReader, back: asyncio.StreamWriter) -> None:
        self._links.add(cast(asyncio.Task[Any], asyncio.current_task()))
        host, port = self._server_url.host, self._server_url.port
        server, to = await asyncio.open_connection(host, port)
        self._writers += [back, to]
        self._clients.append(back)
        await asyncio.gather(self._pump(client, to), self._pump(server, back))

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                if writer not in self._held:
                    writer.write(data)
                    await writer.drain()
        except ConnectionError:  # the other side reset it: closed all the same
            pass
        finally:
            writer.close()
