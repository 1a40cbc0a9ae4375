"""The draw's way in: FastAPI, but the draw route (the hot one, first among the routes)
served through a stack of its own, of the two middlewares it needs.

Through FastAPI.__call__ each draw passed its telemetry check, Starlette's app, the
exception telemetry, the error-handling and exit-stack middlewares and the router's
walk: ~8 µs of CPU a draw, for nothing the draw uses. Its own stack keeps what it does
use, built from the same parts: ServerErrorMiddleware (an unexpected error answers 500,
and is raised on to the server's log) around ExceptionMiddleware (the application's error
table: problem+json), around the route's own request_response. Anything else, and the
draw too while FastAPI's telemetry is on (its spans and metrics) or the app has
middleware of its own, goes FastAPI's way.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send


class FrontDoor(FastAPI):
    """FastAPI, with `fast_route` (a Starlette route of the app) served by its own stack."""

    def __init__(self, *, fast_route: Route, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._fast_route = fast_route
        self._fast_stack: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self._fast_way(scope):
            if self._fast_stack is None:  # at the first request: every handler is in
                self._fast_stack = self._build_fast_stack()
            scope["app"] = self
            await self._fast_stack(scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    def _fast_way(self, scope: Scope) -> bool:
        """Whether the request is the route's (its child scope then merged, as the router
        does) and nothing of FastAPI's own is wanted for it."""
        if self.root_path or self.user_middleware or _telemetry_on(self):
            return False
        if not self.router.routes or self.router.routes[0] is not self._fast_route:
            return False  # only while the router would try it first too
        match, child = self._fast_route.matches(scope)
        if match is not Match.FULL:
            return False  # a method not allowed, say: FastAPI answers it
        scope.update(child)
        return True

    def _build_fast_stack(self) -> ASGIApp:
        # As FastAPI.build_middleware_stack splits the handlers: 500 and Exception for the
        # outer middleware, the rest for the inner.
        error_handler = None
        handlers = {}
        for key, handler in self.exception_handlers.items():
            if key in (500, Exception):
                error_handler = handler
            else:
                handlers[key] = handler
        inner = ExceptionMiddleware(self._fast_route.app, handlers=handlers, debug=self.debug)
        return ServerErrorMiddleware(inner, handler=error_handler, debug=self.debug)


def _telemetry_on(app: FastAPI) -> bool:
    telemetry = getattr(app, "_native_telemetry", None)  # FastAPI's own, where it has one
    return telemetry is not None and bool(telemetry.enabled())
