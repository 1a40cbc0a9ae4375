"""The ASGI factory each uvicorn worker imports (`raffle.entrypoints.http.main:create`)."""

from __future__ import annotations

import atexit
import gc
import os

from fastapi import FastAPI

from raffle.adapters.metrics import forget_process
from raffle.bootstrap import bootstrap
from raffle.entrypoints import logs
from raffle.entrypoints.http.app import create_app
from raffle.settings import Settings

GC_YOUNG_THRESHOLD = 10_000  # CPython's default is 700


def create() -> FastAPI:
    settings = Settings()
    logs.configure(settings)
    atexit.register(forget_process, os.getpid())  # its pools leave the shared metrics
    app = create_app(bootstrap(settings))
    _settle_garbage_collector()
    return app


def _settle_garbage_collector() -> None:
    """What start-up made (modules, the routes, the SQLAlchemy and pydantic machinery: most
    of the heap, for the life of the process) is frozen: full collections stop walking it
    (each stops the event loop, several times a minute at a peak: most of the draws' p99,
    bench/README.md). The young generation, a request's short-lived objects, is collected
    less often. Only in the server's worker processes:
    tests make many apps."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
