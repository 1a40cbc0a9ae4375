"""The ASGI application: routes, the error table, and the background scheduler."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI

from raffle.bootstrap import Raffle
from raffle.entrypoints import worker
from raffle.entrypoints.http import observe, openapi, problems
from raffle.entrypoints.http.hot_route import HotRoute
from raffle.entrypoints.http.maintenance import Maintenance
from raffle.entrypoints.http.routes import (
    accounts,
    admin,
    audit,
    auth,
    campaigns,
    content,
    delivery,
    deny,
    docs,
    draw,
    engagement,
    fairness,
    flash_purchase,
    flash_sales,
    health,
    join_codes,
    pages,
    payments,
    player,
    policies,
    prize_pool,
    prizes,
    profiles,
    route_trees,
    scheduled,
    stock_warnings,
    switches,
    tags,
    tickets,
    winners,
)


def create_app(raffle: Raffle, *, scheduler: bool = True) -> FastAPI:
    """The API over a wired application; `scheduler` runs the scheduled jobs in-process, and
    on the embedded in-process broker (no RAFFLE_BROKER_URL) the relay and consumers too."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await raffle.start()
        in_process = raffle.settings.broker_url is None
        parts = worker.Parts(relay=in_process, consumers=in_process)
        watched = (raffle.switches, raffle.tags, raffle.profiles, raffle.deny, raffle.sessions)
        running = [asyncio.create_task(w.watch()) for w in watched]
        running.append(asyncio.create_task(raffle.flash.watch()))  # its sold-out marks
        if scheduler:
            running.append(asyncio.create_task(worker.run(raffle, parts)))
        try:
            yield
        finally:
            for task in running:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    app = FastAPI(
        title="raffle",
        version="0.1.0",
        summary="Marketing raffles with exact, published odds and no oversell.",
        lifespan=lifespan,
        docs_url=None,  # routes/docs.py serves it, offline
        redoc_url=None,  # ReDoc's script would come from a CDN
        # FastAPI's OpenTelemetry hooks: off, as nothing here exports spans (metrics and
        # logs are observe.py's); on, each request asks OpenTelemetry whether they are wanted.
        telemetry={"tracing": False, "metrics": False, "logs": False},
        # the draw and a flash sale's purchase first, tried before any other route: they are
        # the hot ones (see routes/draw.py, routes/flash_purchase.py)
        routes=[draw.route, flash_purchase.route],
    )
    app.state.raffle = raffle
    app.add_middleware(HotRoute, route=draw.route)  # inside Maintenance: a draw is a write
    app.add_middleware(Maintenance, switches=raffle.switches)
    observe.install(app, raffle)  # outside Maintenance: its 503s are logged and counted too
    problems.install(app)
    openapi.install(app, draw.document, flash_purchase.document)
    # A player's entry next to the draws: operations are documented (and fuzzed) in this order.
    routers = (
        player, scheduled, auth, admin, policies, accounts, switches, tags, campaigns,
        engagement, prizes, delivery, profiles, prize_pool, content, deny, join_codes, winners,
        payments, fairness, audit, tickets, flash_sales,
    )  # fmt: skip
    # Health first among the routers: probes call it often, and a route is found by trying
    # each before it in turn.
    for module in (health, *routers, stock_warnings, pages, docs):
        app.include_router(module.router)
    app.include_router(route_trees.router)
    app.include_router(route_trees.player)
    app.mount("/web", pages.assets(), name="web")
    app.mount(docs.ASSETS, docs.assets(), name="docs-assets")
    return app
