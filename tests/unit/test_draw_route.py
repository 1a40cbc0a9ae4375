"""The draw route's hand-sent answer and header reads against Starlette's own objects."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from raffle.entrypoints.http.deps import client_ip, header
from raffle.entrypoints.http.idempotent import REPLAYED
from raffle.entrypoints.http.routes.draw import created

Message = dict[str, Any]


def sent(answer: Any) -> list[Message]:
    messages: list[Message] = []

    async def send(message: Message) -> None:
        messages.append(message)

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    asyncio.run(answer({"type": "http"}, receive, send))
    return messages


def test_the_draws_answer_is_starlettes_response_message_for_message() -> None:
    for body in (b'{"order_id":"o-1"}', '{"award_title":"一等奖"}'.encode()):
        for replayed in (False, True):
            headers = {REPLAYED: "true"} if replayed else None
            expected = sent(Response(body, 201, headers, media_type="application/json"))
            assert sent(_created(body, replayed)) == expected


def _created(body: bytes, replayed: bool) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await created(send, body, replayed=replayed)

    return app


def _request(headers: list[tuple[bytes, bytes]], client: Any = ("10.0.0.7", 5000)) -> Request:
    return Request({"type": "http", "headers": headers, "client": client})


def test_a_header_and_the_client_read_as_starlettes_request_reads_them() -> None:
    raw = [
        (b"host", b"b"),
        (b"authorization", b"Bearer t\xe9"),
        (b"idempotency-key", b"k-1"),
        (b"idempotency-key", b"k-2"),  # a second one: the first is read, as Starlette does
    ]
    for name in ("Authorization", "Idempotency-Key", "X-Missing"):
        assert header(_request(raw), name.lower().encode()) == _request(raw).headers.get(name)
    for client in (("10.0.0.7", 5000), ["::1", 1], None):
        request = _request(raw, client)
        assert client_ip(request) == (request.client.host if request.client else "unknown")
