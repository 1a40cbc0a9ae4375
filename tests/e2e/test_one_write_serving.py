"""uvicorn on OneWriteHttp over real sockets: answers whole, in order, on kept-alive connections."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from raffle.entrypoints.http.one_write import HOLD_BYTES, OneWriteHttp
from tests.services import free_port

LONG = bytes(range(256)) * (3 * HOLD_BYTES // 256 + 7)  # several pieces of HOLD_BYTES


async def small(request: Request) -> Response:
    return Response(f"answer {request.query_params['n']}", 201)


async def long(request: Request) -> StreamingResponse:
    async def pieces() -> Iterator[bytes]:  # type: ignore[misc]
        for start in range(0, len(LONG), 10_000):
            yield LONG[start : start + 10_000]

    return StreamingResponse(pieces())


APP = Starlette(routes=[Route("/small", small, methods=["GET", "HEAD"]), Route("/long", long)])


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    port = free_port()
    config = uvicorn.Config(
        APP, host="127.0.0.1", port=port, http=OneWriteHttp, loop="uvloop", log_config=None
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        with httpx.Client() as client:
            for _ in range(200):
                try:
                    client.get(f"http://127.0.0.1:{port}/small?n=0", timeout=1)
                    break
                except httpx.TransportError:
                    threading.Event().wait(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_answers_on_one_kept_connection_arrive_whole_and_in_order(base: str) -> None:
    with httpx.Client(limits=httpx.Limits(max_connections=1)) as client:
        for n in range(50):
            answer = client.get(f"{base}/small?n={n}")
            assert (answer.status_code, answer.text) == (201, f"answer {n}")
            if n % 10 == 0:
                streamed = client.get(f"{base}/long")
                assert streamed.content == LONG
                head = client.head(f"{base}/small?n={n}")
                assert (head.status_code, head.content) == (201, b"")
                assert head.headers["content-length"] == str(len(f"answer {n}"))


def test_an_answer_that_closes_the_connection_is_sent_whole_first(base: str) -> None:
    for n in range(20):
        answer = httpx.get(f"{base}/small?n={n}", headers={"Connection": "close"})
        assert (answer.status_code, answer.text) == (201, f"answer {n}")
        assert answer.headers["connection"] == "close"
