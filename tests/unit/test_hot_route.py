"""The hot route's middleware: a full match goes to the route, anything else on to the app."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.routing import Route

from raffle.entrypoints.http.hot_route import HotRoute

Message = dict[str, Any]


class _Named:
    """An ASGI app that answers with its name, and the path parameters it was given."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "answer", "by": self.name, "params": scope.get("path_params")})


def _answer(method: str, path: str, kind: str = "http") -> Message:
    route = Route("/api/activities/{activity_id}/draws", _Named("route"), methods=["POST"])
    door = HotRoute(_Named("app"), route=route)
    messages: list[Message] = []

    async def send(message: Message) -> None:
        messages.append(message)

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    scope = {"type": kind, "method": method, "path": path, "root_path": ""}
    asyncio.run(door(scope, receive, send))
    [answer] = messages
    return answer


def test_a_request_the_route_matches_in_full_goes_to_the_route_with_its_parameters() -> None:
    answer = _answer("POST", "/api/activities/7/draws")
    assert answer == {"type": "answer", "by": "route", "params": {"activity_id": "7"}}


def test_another_method_path_or_scope_type_goes_on_to_the_app() -> None:
    # A wrong method is the router's to refuse (405), with the route's other methods.
    assert _answer("GET", "/api/activities/7/draws")["by"] == "app"
    assert _answer("POST", "/api/activities/7/draws/1")["by"] == "app"
    assert _answer("POST", "/api/health")["by"] == "app"
    assert _answer("GET", "/api/activities/7/draws", kind="websocket")["by"] == "app"
