"""The ASGI application: routes, the error table, and the background scheduler."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator
from datetime import timedelta

from fastapi import FastAPI

from raffle.bootstrap import Raffle
from raffle.entrypoints.http import problems
from raffle.entrypoints.http.routes import admin, auth, engagement, player, prizes
from raffle.service.activities import advance

log = logging.getLogger(__name__)
TICK_SECONDS = 1.0
SWEEP_EVERY = 300  # ticks between sweeps of expired sessions and old idempotency keys
KEEP_KEYS = timedelta(days=1)  # how long a retry with the same Idempotency-Key replays


def create_app(raffle: Raffle, *, scheduler: bool = True) -> FastAPI:
    """The API over a wired application; `scheduler` runs the activity clock in-process."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await raffle.start()
        ticking = asyncio.create_task(_tick(raffle)) if scheduler else None
        try:
            yield
        finally:
            if ticking is not None:
                ticking.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await ticking

    app = FastAPI(
        title="raffle",
        version="0.1.0",
        summary="Marketing raffles with exact, published odds and no oversell.",
        lifespan=lifespan,
    )
    app.state.raffle = raffle
    problems.install(app)
    for module in (auth, player, admin, engagement, prizes):
        app.include_router(module.router)

    @app.get("/api/health", tags=["ops"])
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


async def _tick(raffle: Raffle) -> None:
    """Start and close activities on time, and now and then sweep what has expired.
    Several processes may tick: moves are CAS, and sweeping twice deletes nothing more."""
    for tick in itertools.count():
        try:
            moved = await advance(raffle.uow, raffle.clock.now())
            if moved:
                raffle.catalogue.forget()
                log.info("activities moved: %s", moved)
            if tick % SWEEP_EVERY == 0:
                await raffle.sessions.delete_expired()
                await raffle.idempotency.delete_older(raffle.clock.now() - KEEP_KEYS)
        except Exception:
            log.exception("scheduler tick failed; trying again")
        await asyncio.sleep(TICK_SECONDS)
