"""The draw, the hot route: a plain Starlette route, and its path item in the OpenAPI document."""

# FastAPI's work per request (solving the dependencies, validating the parameters and the
# answer) is a good part of a draw's CPU, and the draw is the route under load; this one
# makes the same checks, with the functions the FastAPI dependencies call, in the same
# order: the session, the path, the Idempotency-Key. The draw's own checks (deny lists,
# pause, rate limit, join code) are draw()'s. The route is taken before the error table's
# middleware (hot_route.py), so it answers its errors itself, with the error table's own
# functions; a refusal of a signed-in player is counted for the automatic blocking rules
# here. An ASGI app rather than a request/response function, it reads the two headers and
# sends its answer without Starlette's Headers or Response objects.

from __future__ import annotations

import inspect

from fastapi.exceptions import RequestValidationError
from pydantic import TypeAdapter
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from raffle.bootstrap import Raffle
from raffle.domain.blocking import BlockEvent
from raffle.domain.draws import UnknownActivity
from raffle.domain.errors import RaffleError, Unavailable
from raffle.domain.users import InvalidInput
from raffle.entrypoints.http.bounds import Id
from raffle.entrypoints.http.deps import (
    IDEMPOTENCY_KEY,
    bearer,
    client_ip,
    get_idempotency_key,
    header,
    path_parameter,
    session_of,
)
from raffle.entrypoints.http.idempotent import REPLAYED
from raffle.entrypoints.http.openapi import Document, schema_ref, security
from raffle.entrypoints.http.problems import documented, invalid, send_problem
from raffle.entrypoints.http.schemas import DrawOut, draw_json
from raffle.entrypoints.http.ticket_schemas import TicketOut, ticket_path
from raffle.service.draw import Draw, draw
from raffle.service.idempotency import MAX_KEY
from raffle.service.queued_draws import accept

PATH = "/api/activities/{activity_id}/draws"

_ACTIVITY_ID = TypeAdapter(Id)  # the path parameter, read as FastAPI reads an `Id` one
_REPLAYED = REPLAYED.lower().encode()
_JSON = (b"content-type", b"application/json")


class DrawOnce:
    """The draw's ASGI app. Starlette's Route calls an instance as it is, where it would wrap
    a function in request_response: a layer of the error table, and a Response to send."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Draw: one chance for one prize. Send an Idempotency-Key to make retries safe: the
        draw keeps it on its order (in the draw's own transaction), and a retry gets the same
        order back, marked `Idempotent-Replayed: true`. An activity with queued draws answers
        `202` and a ticket instead (its `Location`), drawn in the order accepted: poll
        GET /api/activities/{activity_id}/tickets/{ticket}; it refuses `queue_full` (503,
        Retry-After) when its queue is at its bound."""
        request = Request(scope, receive)
        raffle: Raffle = request.app.state.raffle
        try:
            await _draw(raffle, request, send)
        except RaffleError as refused:
            raffle.metrics.refused(refused.code)
            # The application's error table answers, as its handler would once the error had
            # climbed the middleware: refusals are most of the answers under a rush.
            await send_problem(refused, scope, receive, send)
        except RequestValidationError as invalid_input:
            raffle.metrics.refused(InvalidInput.code)  # the code the error table answers it with
            await invalid(invalid_input)(scope, receive, send)


async def _draw(raffle: Raffle, request: Request, send: Send) -> None:
    session = await session_of(raffle, header(request, b"authorization"))
    ip = client_ip(request)
    try:
        await _drawn(raffle, request, session.user_id, ip, send)
    except Unavailable:  # not the player's doing: no refusal to count
        raise
    except RaffleError:
        # The one place a draw's refusal is answered: the blocking rules count it here.
        await raffle.blocking.noted(BlockEvent.REFUSED_DRAW, user_id=session.user_id, ip=ip)
        raise


async def _drawn(raffle: Raffle, request: Request, user_id: str, ip: str, send: Send) -> None:
    activity_id = _activity_id(request.path_params["activity_id"])
    key = await get_idempotency_key(header(request, b"idempotency-key"))
    if await _queued(raffle, activity_id):
        accepted = await _accepted(raffle, Draw(user_id, activity_id, key), ip)
        await accepted(request.scope, request.receive, send)
        return
    result = await draw(
        Draw(user_id, activity_id, key),
        catalogue=raffle.catalogue,
        shards=raffle.shards,
        stock=raffle.stock,
        rng=raffle.rng,
        clock=raffle.clock,
        hints=raffle.hints,
        metrics=raffle.metrics,
        profiles=raffle.profiles,
        audience=raffle.tags,
        caps=raffle.caps,
        checks=raffle.draw_checks,
        ip=ip,
        seeds=raffle.seeds,
    )
    awards = await raffle.catalogue.awards()
    body = draw_json(result, awards[result.award_id]).encode()
    await created(send, body, replayed=result.replayed)


async def created(send: Send, body: bytes, *, replayed: bool) -> None:
    """What `Response(body, 201, {REPLAYED: "true"} if replayed else None, media_type=
    "application/json")` sends, message for message, without making one (the draw's answer:
    tests/unit/test_draw_route holds the two together)."""
    headers = [(_REPLAYED, b"true")] if replayed else []
    headers += ((b"content-length", str(len(body)).encode()), _JSON)
    await send({"type": "http.response.start", "status": 201, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _queued(raffle: Raffle, activity_id: int) -> bool:
    """Whether the activity queues its draws (an unknown one is draw()'s to refuse)."""
    try:
        return (await raffle.catalogue.activity(activity_id)).queued
    except UnknownActivity:
        return False


async def _accepted(raffle: Raffle, cmd: Draw, ip: str) -> Response:
    """A queued activity's draw: 202 and the ticket to poll (service/queued_draws.py)."""
    queued = await accept(
        cmd, catalogue=raffle.catalogue, config=raffle.uow, broker=raffle.broker,
        clock=raffle.clock, queue=raffle.queue(), checks=raffle.draw_checks, ip=ip,
    )  # fmt: skip
    t = queued.ticket
    headers = {"Location": ticket_path(t.activity_id, t.ticket)}
    if queued.replayed:
        headers[REPLAYED] = "true"
    body = TicketOut.of(queued).model_dump_json()
    return Response(body, 202, headers, media_type="application/json")


# First among the application's routes: the router tries them in order.
route = Route(PATH, DrawOnce(), methods=["POST"], name="draw_once", include_in_schema=False)


def _activity_id(raw: str) -> int:
    activity_id: int = path_parameter(_ACTIVITY_ID, "activity_id", raw)
    return activity_id


def document(openapi: Document) -> None:
    """Adds the draw's operation to the OpenAPI document of the application's other routes."""
    operation = {
        "tags": ["player"],
        "summary": "Draw Once",
        "description": inspect.cleandoc(DrawOnce.__call__.__doc__ or ""),
        "operationId": "draw_once_api_activities__activity_id__draws_post",
        "security": security(openapi, bearer),
        "parameters": [
            {
                "name": "activity_id",
                "in": "path",
                "required": True,
                "schema": {**_ACTIVITY_ID.json_schema(), "title": "Activity Id"},
            },
            {
                "name": "idempotency-key",
                "in": "header",
                "required": False,
                "description": IDEMPOTENCY_KEY,
                "schema": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_KEY,
                    "title": "Idempotency-Key",
                },
            },
        ],
        "responses": {
            "201": {
                "description": "Successful Response",
                "content": {"application/json": {"schema": schema_ref(openapi, DrawOut)}},
            },
            "202": {
                "description": "A queued activity's draw accepted: its ticket, to poll",
                "content": {"application/json": {"schema": schema_ref(openapi, TicketOut)}},
            },
            **{str(s): r for s, r in documented(401, 403, 404, 409, 422, 429, 503).items()},
        },
    }
    openapi["paths"].setdefault(PATH, {})["post"] = operation
