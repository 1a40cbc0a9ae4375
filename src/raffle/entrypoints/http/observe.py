"""Watching the HTTP service: a log line and metrics per request, and GET /metrics."""

from __future__ import annotations

import logging
import os
import re
import time

import structlog
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from structlog.contextvars import bind_contextvars, clear_contextvars

from raffle.adapters.metrics import MEDIA_TYPE
from raffle.bootstrap import Raffle
from raffle.service.gauges import measure
from raffle.service.ports import Metrics

REQUEST_ID = "X-Request-ID"
UNMATCHED = "unmatched"  # the route of a request no route took: its path is no label
# A caller's id is kept when it is one short token (a log line is no place for more).
_CALLERS_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_HEADER = REQUEST_ID.lower().encode()

log = structlog.get_logger()


def install(app: FastAPI, raffle: Raffle) -> None:
    app.add_middleware(AccessLog, metrics=raffle.metrics)
    app.add_route("/metrics", metrics, methods=["GET"], include_in_schema=False)


class AccessLog:
    """Our access log (uvicorn's is off). Pure ASGI: no task or body copy per request, as
    BaseHTTPMiddleware makes. Never logs headers, bodies or query strings: they carry tokens
    and passwords. The user id is the session's, bound by deps.session_of."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics
        self._templates: dict[object, str] | None = None  # route path by endpoint
        # Bound once, as logging is configured now: the module's proxy builds a logger anew
        # on each call (so that tests may configure logging again). Its level came with it:
        # below info (a server's warning), a request's line is not even put together.
        self._log = log.bind()
        self._info = self._log.is_enabled_for(logging.INFO)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = _request_id(scope)
        clear_contextvars()
        bind_contextvars(request_id=request_id)
        echoed = (_HEADER, request_id.encode())
        status = 500  # until an answer starts: an error raised past here becomes a 500

        async def answer(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), echoed]
            await send(message)

        try:
            await self.app(scope, receive, answer)
        finally:
            seconds = time.perf_counter() - started
            method, route = scope["method"], self._route(scope)
            self.metrics.answered(method, route, status, seconds)
            if status >= 500 or self._info:
                (self._log.error if status >= 500 else self._log.info)(
                    "request",
                    method=method,
                    route=route,
                    status=status,
                    duration_ms=round(seconds * 1000, 3),
                )

    def _route(self, scope: Scope) -> str:
        """The template of the route that took the request: FastAPI's routes are in the
        scope, a plain Starlette route (the draw) or mount leaves its endpoint there."""
        if (route := scope.get("route")) is not None:
            path: str = route.path
            return path
        if (endpoint := scope.get("endpoint")) is None:
            return UNMATCHED
        if self._templates is None:
            routes = scope["app"].routes
            self._templates = {r.endpoint: r.path for r in routes if isinstance(r, Route)}
            self._templates |= {m.app: m.path for m in routes if isinstance(m, Mount)}
        return self._templates.get(endpoint, UNMATCHED)


def _request_id(scope: Scope) -> str:
    for name, value in scope["headers"]:
        if name == _HEADER:
            given: str = value.decode("latin-1")
            if _CALLERS_ID.fullmatch(given):
                return given
            break
    return os.urandom(16).hex()


async def metrics(request: Request) -> Response:
    """Levels measured now (outbox backlog, stock left, this process's pools), then every
    count of every process. A database or Redis that does not answer leaves the levels last
    measured: the counts are still served."""
    raffle: Raffle = request.app.state.raffle
    try:
        await measure(
            config=raffle.uow,
            catalogue=raffle.catalogue,
            shards=raffle.shards,
            stock=raffle.stock,
            metrics=raffle.metrics,
            now=raffle.clock.now(),
        )
    except Exception:
        log.warning("levels not measured for /metrics", exc_info=True)
    raffle.metrics.measure_pools(raffle.pools())
    return Response(raffle.metrics.render(), media_type=MEDIA_TYPE)
