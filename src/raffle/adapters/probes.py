"""Checks that the services a process depends on answer: databases, Redis, the broker."""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.redis_commands import RedisClient

_CLASS_PREFIX = re.compile(r"^(?:\(\S+\)\s*)?(?:<class '[^']+'>:\s*)?")


@dataclass(frozen=True, slots=True)
class Probe:
    """One service: `name` in the readiness answer, `service` in messages ("the database"),
    the `setting` that points at it and its `url`."""

    name: str
    service: str
    setting: str
    url: str
    check: Callable[[], Awaitable[None]]

    def unreachable(self, why: str) -> str:
        """The one line telling an operator which service does not answer and where it is."""
        shown, hidden = redacted(self.url)
        where = f"{shown}, password hidden" if hidden else shown
        return f"cannot reach {self.service} at {self.setting} ({where}): {why}"


async def failures(probes: Sequence[Probe], seconds: float) -> dict[str, str | None]:
    """Each probe's name and why it failed (None when it answered), all run at once, each
    given `seconds` to answer."""

    async def one(probe: Probe) -> str | None:
        try:
            async with asyncio.timeout(seconds):
                await probe.check()
        except TimeoutError:
            return f"no answer within {seconds:g} s"
        except Exception as error:  # whatever a client raises: it is the answer
            return reason(error)
        return None

    found = await asyncio.gather(*(one(p) for p in probes))
    return {p.name: why for p, why in zip(probes, found, strict=True)}


def sql(engine: AsyncEngine) -> Callable[[], Awaitable[None]]:
    async def check() -> None:
        async with engine.connect() as connection:
            await connection.execute(text("SELECT 1"))

    return check


def ping(client: RedisClient) -> Callable[[], Awaitable[None]]:
    async def check() -> None:
        await client.ping()

    return check


def reason(error: BaseException) -> str:
    """A short reason for a failed connection: the OS's words where the cause was one,
    else the first line of the innermost error, without the class names drivers add."""
    chain = list(_causes(error))
    for cause in chain:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return "unknown host"
        if isinstance(cause, TimeoutError):
            return "no answer in time"
    innermost = next((c for c in reversed(chain) if str(c).strip()), error)
    line = str(innermost).strip().splitlines()[0] if str(innermost).strip() else ""
    return _CLASS_PREFIX.sub("", line) or type(innermost).__name__


def redacted(url: str) -> tuple[str, bool]:
    """`url` with its password replaced by ***, and whether it had one."""
    parts = urlsplit(url)
    if parts.password is None:
        return url, False
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}")), True


def _causes(error: BaseException) -> Iterator[BaseException]:
    """The error, then what it was raised from, outermost first (a driver's error that
    SQLAlchemy wrapped included)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        orig = getattr(current, "orig", None)
        nested = orig if isinstance(orig, BaseException) else None
        current = current.__cause__ or nested or current.__context__
