"""The ASGI factory each uvicorn worker imports (`raffle.entrypoints.http.main:create`)."""

from __future__ import annotations

from fastapi import FastAPI

from raffle.bootstrap import bootstrap
from raffle.entrypoints.http.app import create_app
from raffle.settings import Settings


def create() -> FastAPI:
    return create_app(bootstrap(Settings()))
