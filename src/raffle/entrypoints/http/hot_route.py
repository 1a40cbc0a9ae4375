"""The draw's route taken before the application's error table and router: the hot one."""

from __future__ import annotations

from starlette.routing import Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send


class HotRoute:
    """ASGI middleware, the innermost of ours: a request `route` matches in full goes to it
    at once, past the error table's middleware and the router's search; any other request
    goes on. The route stays one of the application's (its 405s, its name in the access
    log), and answers its own errors: between here and the server's 500 nothing catches
    them."""

    def __init__(self, app: ASGIApp, route: Route) -> None:
        self._app = app
        self._route = route

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match, child = self._route.matches(scope)  # NONE for anything but HTTP
        if match is Match.FULL:
            scope.update(child)
            await self._route.handle(scope, receive, send)
            return
        await self._app(scope, receive, send)
