"""Probes of services: why one failed in a few words, and where it is without its password."""

from __future__ import annotations

import asyncio
import socket

from raffle.adapters.probes import Probe, failures, reason, redacted


async def _fine() -> None:
    return None


async def _refused() -> None:
    try:
        raise ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 1)")
    except OSError as error:
        raise RuntimeError("the driver's own wrapping") from error


async def _silent() -> None:
    await asyncio.sleep(60)


def _probe(name: str, check: object, url: str = "redis://127.0.0.1:1/0") -> Probe:
    return Probe(name, "Redis", "RAFFLE_REDIS_URL", url, check)  # type: ignore[arg-type]


async def test_each_probe_is_named_with_why_it_failed_and_a_silent_one_times_out() -> None:
    probes = [_probe("a", _fine), _probe("b", _refused), _probe("c", _silent)]
    found = await failures(probes, 0.05)
    assert found == {"a": None, "b": "connection refused", "c": "no answer within 0.05 s"}


def test_the_operating_system_says_why_through_any_wrapping() -> None:
    wrapped = ConnectionError("Error -2 connecting to nowhere:6379.")
    wrapped.__cause__ = socket.gaierror(-2, "Name or service not known")
    assert reason(wrapped) == "unknown host"
    timed_out = RuntimeError("the pool gave up")
    timed_out.__context__ = TimeoutError()
    assert reason(timed_out) == "no answer in time"


def test_otherwise_the_innermost_message_without_the_class_names_drivers_add() -> None:
    class DriverError(Exception):
        pass

    class Wrapped(Exception):
        def __init__(self, orig: BaseException) -> None:
            super().__init__("(sqlalchemy...) <class 'x'>: wrapped\n[SQL: SELECT 1]")
            self.orig = orig

    inner = DriverError("<class 'asyncpg.InvalidCatalogNameError'>: database \"x\" does not exist")
    assert reason(Wrapped(inner)) == 'database "x" does not exist'
    assert reason(DriverError()) == "DriverError"


def test_a_url_is_shown_with_its_password_hidden() -> None:
    assert redacted("postgresql+asyncpg://raffle:s3cret@10.0.0.5:5432/raffle") == (
        "postgresql+asyncpg://raffle:***@10.0.0.5:5432/raffle",
        True,
    )
    assert redacted("redis://:s3cret@cache:6379/0") == ("redis://:***@cache:6379/0", True)
    assert redacted("amqp://broker:5672/") == ("amqp://broker:5672/", False)


def test_an_unreachable_service_is_one_line_naming_its_setting() -> None:
    probe = _probe("redis", _fine, "redis://:s3cret@127.0.0.1:1/0")
    assert probe.unreachable("connection refused") == (
        "cannot reach Redis at RAFFLE_REDIS_URL (redis://:***@127.0.0.1:1/0, password hidden): "
        "connection refused"
    )
