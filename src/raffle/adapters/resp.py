"""RESP for the shared pipeline's round trips: commands packed and replies read as
redis-py does, byte for byte and value for value, for the few reply types its commands get
(simple string, error, integer, bulk, null, arrays of these; RESP2 or RESP3). redis-py's
pure-Python parser (without hiredis) costs more CPU per reply: a coroutine and a readline
per element, its decoder and push-message checks."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from redis._parsers.base import BaseParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import DataError, InvalidResponse, ResponseError

Arg = str | bytes | int | float

_READ_SIZE = 65536


def pack(commands: list[tuple[Arg, ...]]) -> bytes:
    """The commands as redis-py's pack_commands writes them (its chunks joined)."""
    pieces: list[bytes] = []
    for command in commands:
        args = _split_name(command)
        pieces.append(b"*%d\r\n" % len(args))
        for arg in args:
            data = _encoded(arg)
            pieces.append(b"$%d\r\n" % len(data))
            pieces.append(data)
            pieces.append(b"\r\n")
    return b"".join(pieces)


def _split_name(command: tuple[Arg, ...]) -> tuple[Arg, ...]:
    """A name with a space ("SCRIPT LOAD") goes as separate words, as redis-py sends it."""
    name = command[0]
    if isinstance(name, str):
        return (*name.encode().split(), *command[1:])
    if isinstance(name, bytes) and b" " in name:
        return (*name.split(), *command[1:])
    return command


def _encoded(arg: Arg) -> bytes:
    # The checks and messages of redis-py's Encoder (utf-8, the default): a bool would be
    # sent as 1 or 0 by str(), which redis-py refuses to guess.
    if isinstance(arg, bytes):
        return arg
    if isinstance(arg, str):
        return arg.encode()
    if isinstance(arg, bool):
        raise DataError(
            "Invalid input of type: 'bool'. Convert to a bytes, string, int or float first."
        )
    if isinstance(arg, int | float):
        return repr(arg).encode()
    raise DataError(
        f"Invalid input of type: '{type(arg).__name__}'. "
        "Convert to a bytes, string, int or float first."
    )


class _Incomplete(Exception):
    """The buffer ends inside the reply: read more and parse it again from its start."""


async def read_replies(stream: asyncio.StreamReader, count: int) -> list[Any]:
    """The next `count` replies; an error reply as its exception (not raised), as redis-py
    returns it inside arrays. Every byte read belongs to these replies (nothing else was
    asked for on the connection), so nothing is kept between round trips."""
    replies: list[Any] = []
    buffer = b""
    position = 0
    while len(replies) < count:
        try:
            reply, position = _parse(buffer, position)
        except _Incomplete:
            chunk = await stream.read(_READ_SIZE)
            if not chunk:
                raise RedisConnectionError("Connection closed by server.") from None
            buffer = buffer[position:] + chunk
            position = 0
            continue
        replies.append(reply)
    if position != len(buffer):
        raise InvalidResponse("Protocol Error: more replies than commands")
    return replies


def _parse(buffer: bytes, start: int) -> tuple[Any, int]:
    """One reply from `start`, and where the next one begins."""
    end = buffer.find(b"\r\n", start)
    if end < 0:
        raise _Incomplete
    kind = buffer[start]
    line = buffer[start + 1 : end]
    if kind == 36:  # $ bulk string
        return _bulk(buffer, end + 2, int(line))
    if kind == 58:  # : integer
        return int(line), end + 2
    if kind == 42:  # * array
        return _array(buffer, end + 2, int(line))
    read = _LINES.get(kind)
    if read is None:  # push messages, maps, sets: not asked for by the pipeline's commands
        raise InvalidResponse(f"Protocol Error: {buffer[start:end]!r}")
    return read(line), end + 2


def _bulk(buffer: bytes, start: int, length: int) -> tuple[bytes | None, int]:
    if length < 0:
        return None, start
    stop = start + length
    if len(buffer) < stop + 2:
        raise _Incomplete
    return buffer[start:stop], stop + 2


def _array(buffer: bytes, start: int, length: int) -> tuple[list[Any] | None, int]:
    if length < 0:
        return None, start
    items = []
    for _ in range(length):
        item, start = _parse(buffer, start)
        items.append(item)
    return items, start


def _error(line: bytes) -> ResponseError:
    """The exception redis-py makes of an error reply (NoScriptError for NOSCRIPT, ...);
    one that means the connection is unusable (LOADING, max clients) is raised, as there."""
    error = BaseParser.parse_error(line.decode("utf-8", errors="replace"))  # type: ignore[no-untyped-call]
    if isinstance(error, RedisConnectionError):
        raise error
    return error  # type: ignore[no-any-return]


# The one-line replies of RESP2 and of RESP3 (redis-py's default protocol), read as redis-py's
# parser of that protocol reads them.
_LINES: dict[int, Callable[[bytes], Any]] = {
    43: bytes,  # + simple string
    45: _error,  # - error
    95: lambda _line: None,  # _ null (RESP3: a nil bulk or array, Lua's false)
    35: lambda line: line == b"t",  # # boolean
    44: float,  # , double
    40: int,  # ( big number
}
