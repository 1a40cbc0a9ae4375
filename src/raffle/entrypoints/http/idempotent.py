"""Running a state-changing request at most once per Idempotency-Key."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from raffle.domain.errors import RaffleError
from raffle.entrypoints.http.problems import problem_of, response_of
from raffle.service.idempotency import request_hash
from raffle.service.ports import IdempotencyStore

REPLAYED = "Idempotent-Replayed"


async def once(
    request: Request,
    store: IdempotencyStore,
    user_id: str,
    key: str | None,
    run: Callable[[], Awaitable[BaseModel]],
) -> Response:
    """Answer with `run()`, or with the stored answer of the first request under `key`.

    Errors the caller made (problem answers) are stored and replayed too; an unexpected
    failure forgets the key, so the retry runs again.
    """
    if key is None:
        return _response(await run())
    fingerprint = request_hash(request.method, request.url.path, await request.body())
    if (stored := await store.begin(user_id, key, fingerprint)) is not None:
        stored_status, body = stored
        return Response(
            body, stored_status, media_type=_media(stored_status), headers={REPLAYED: "true"}
        )
    try:
        response = _response(await run())
    except RaffleError as error:
        response = response_of(problem_of(error))
    except BaseException:
        await store.abandon(user_id, key)
        raise
    await store.finish(user_id, key, response.status_code, bytes(response.body).decode())
    return response


def _response(body: BaseModel) -> Response:
    return JSONResponse(jsonable_encoder(body))


def _media(status: int) -> str:
    return "application/problem+json" if status >= 400 else "application/json"
