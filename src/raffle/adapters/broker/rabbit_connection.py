"""Connections to RabbitMQ that a silent peer cannot hold: AMQP heartbeats, and closes waited
for only so long.

The broker keeps what it gave a connection (its unacknowledged messages) while the connection
lives, and a close the peer never answers, or never reads, cannot finish by itself. With
heartbeats each side drops a connection on which it has heard nothing for a few beats: the
broker gives the messages out again, and the close left running ends.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable
from functools import partial

import aio_pika
from aio_pika.abc import AbstractRobustConnection
from yarl import URL

# Below two seconds a beat goes every second (aiormq's floor) and the broker gives up
# after two silent beats: a busy event loop would lose its connection for nothing.
SHORTEST_HEARTBEAT = 2

_CLOSING: set[asyncio.Future[None]] = set()  # closes still running, kept from the collector


async def connect(url: str, *, bound: float) -> AbstractRobustConnection:
    """aio-pika's robust connection (reconnecting after a broker restart), opened within
    `bound` seconds, with heartbeats (see with_heartbeat).

    A caller cancelled while it opens (a worker stopping) leaves the opening to finish and
    closes what it opened: cancelled half-way, aio-pika's connection would be left open, and
    closed by its finaliser after the event loop is gone."""
    opening = asyncio.ensure_future(
        aio_pika.connect_robust(with_heartbeat(url, bound), timeout=bound)
    )
    try:
        return await asyncio.shield(opening)
    except asyncio.CancelledError:
        opening.add_done_callback(partial(_close_opened, bound))
        raise


def _close_opened(bound: float, opening: asyncio.Future[AbstractRobustConnection]) -> None:
    if not opening.cancelled() and opening.exception() is None:
        closing = asyncio.ensure_future(close_within(opening.result(), bound))
        _CLOSING.add(closing)
        closing.add_done_callback(_closed)


def with_heartbeat(url: str, timeout: float) -> str:
    """`url` with a heartbeat of `timeout` seconds (at least SHORTEST_HEARTBEAT), unless it
    names its own: a peer silent for a few publish timeouts is taken for gone. aiormq
    would ask for 60 s, and the broker give up on a silent client after two to three
    minutes."""
    parsed = URL(url)
    if "heartbeat" in parsed.query:
        return url
    seconds = max(SHORTEST_HEARTBEAT, math.ceil(timeout))
    return str(parsed.update_query(heartbeat=seconds))


async def close_within(connection: AbstractRobustConnection, seconds: float) -> None:
    """Closed, or left closing past `seconds` (no longer reconnecting either way): a close
    the peer does not answer ends once the heartbeats give the peer up."""
    await finished_within(seconds, connection.close())


async def finished_within(seconds: float, close: Awaitable[None]) -> bool:
    """Whether `close` finished within `seconds` (raising what it raised). Past them it is
    left running, not cancelled: aiormq's close waits for its writer, and the writer for the
    socket's last bytes, whatever cancels it."""
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
