"""entrypoints/logs.py: one format for structlog's lines and the standard library's."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog

from raffle.entrypoints import logs
from raffle.settings import Settings


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def restored() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:], root.level = handlers, level
    structlog.reset_defaults()


def test_lines_are_json_off_a_terminal_with_level_time_and_process() -> None:
    stream = io.StringIO()
    logs.configure(Settings(log_format="auto"), stream)
    structlog.get_logger().info("request", route="/api/x", status=201)
    logging.getLogger("uvicorn.error").warning("from the standard library")
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert (first["event"], first["route"], first["status"], first["level"]) == (
        "request",
        "/api/x",
        201,
        "info",
    )
    assert {"timestamp", "pid"} <= set(first)
    assert (second["event"], second["logger"], second["level"]) == (
        "from the standard library",
        "uvicorn.error",
        "warning",
    )


def test_a_terminal_gets_readable_lines_and_json_can_be_forced() -> None:
    terminal = Terminal()
    logs.configure(Settings(log_format="auto"), terminal)
    structlog.get_logger().info("request", route="/api/x")
    assert "route" in terminal.getvalue()
    assert not terminal.getvalue().startswith("{")  # not JSON
    forced = Terminal()
    logs.configure(Settings(log_format="json"), forced)
    structlog.get_logger().info("request", route="/api/x")
    assert json.loads(forced.getvalue())["route"] == "/api/x"


def test_the_level_filters_both_kinds_of_lines() -> None:
    stream = io.StringIO()
    logs.configure(Settings(log_format="json", log_level="WARNING"), stream)
    structlog.get_logger().info("request")
    logging.getLogger("raffle").info("quiet")
    structlog.get_logger().warning("loud")
    assert [json.loads(line)["event"] for line in stream.getvalue().splitlines()] == ["loud"]


@pytest.mark.parametrize("form", ["json", "console"])
def test_a_traceback_leaves_out_the_frames_variables(form: str) -> None:
    # Locals of a failing frame hold headers, passwords and settings: never logged.
    stream = io.StringIO()
    logs.configure(Settings(log_format=form), stream)
    authorization = "Bearer s3cr3t-t0ken"
    try:
        raise RuntimeError(f"broke with {len(authorization)} characters")
    except RuntimeError:
        structlog.get_logger().exception("failed")
        logging.getLogger("uvicorn.error").exception("failed too")
    assert stream.getvalue().count("broke with 19 characters") == 2
    assert "s3cr3t" not in stream.getvalue()
