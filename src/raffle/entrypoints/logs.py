"""Logs: one key-value line per event on stderr, JSON for a collector or readable on a terminal."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog
from structlog.tracebacks import ExceptionDictTransformer
from structlog.typing import Processor

from raffle.settings import Settings


def configure(settings: Settings, stream: TextIO | None = None) -> None:
    """Once per process, at start-up (each uvicorn worker is a process of its own): lines of
    structlog's loggers (requests, job runs) and of the standard library's (uvicorn's, the
    service's warnings) go to `stream`, stderr by default, in one format. `auto` is JSON
    unless `stream` is a terminal."""
    stream = stream or sys.stderr
    level = logging.getLevelNamesMapping()[settings.log_level.upper()]
    terminal = stream.isatty()
    as_json = settings.log_format == "json" or (settings.log_format == "auto" and not terminal)
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,  # the request's id and user, while it runs
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _Pid(os.getpid()),  # which of several worker processes wrote it
    ]
    # Tracebacks without the frames' local variables: they hold request headers (tokens),
    # passwords and settings (database URLs with theirs).
    ending: list[Processor] = (
        [
            structlog.processors.ExceptionRenderer(ExceptionDictTransformer(show_locals=False)),
            structlog.processors.JSONRenderer(),
        ]
        if as_json
        else [
            structlog.dev.ConsoleRenderer(
                colors=terminal, exception_formatter=structlog.dev.plain_traceback
            )
        ]
    )
    structlog.configure(
        processors=[*shared, *ending],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.WriteLoggerFactory(stream),
        # Not cached: a configuration made later (a test's) still applies to every logger.
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *ending],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


class _Pid:
    def __init__(self, pid: int) -> None:
        self._pid = pid

    def __call__(
        self, logger: Any, method: str, event: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        event["pid"] = self._pid
        return event
