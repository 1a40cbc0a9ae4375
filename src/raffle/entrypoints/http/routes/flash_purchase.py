"""A flash sale's purchase, the rush's route: a plain Starlette route, as the draw's is."""

# A rush is mostly purchases answered sold out from the process's mark, for which FastAPI's
# work per request (the dependencies, the parameters, the answer's validation) was most of
# the cost. This route makes the same checks in the same order with the functions the
# FastAPI dependencies call: the session, then the path parameters. Errors go through the
# application's error table as any route's.

from __future__ import annotations

import inspect
from typing import Annotated

from pydantic import Field, TypeAdapter
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from raffle.bootstrap import Raffle
from raffle.domain.flash_sales import Answer
from raffle.entrypoints.http.bounds import ID_LIMIT
from raffle.entrypoints.http.deps import bearer, client_ip, path_parameter, session_of
from raffle.entrypoints.http.flash_schemas import PurchaseOut
from raffle.entrypoints.http.openapi import Document, schema_ref, security
from raffle.entrypoints.http.problems import documented

PATH = "/api/flash-sales/{sale_id}/{purchase_path}/purchase"

# The path parameters, read as FastAPI read them when this was one of its routes.
_SALE_ID = TypeAdapter(Annotated[int, Field(ge=1, lt=ID_LIMIT, examples=[1111])])
_PURCHASE_PATH = TypeAdapter(Annotated[str, Field(max_length=64)])
_ANSWERS = {a: PurchaseOut.of(a).model_dump_json().encode() for a in Answer}


async def purchase(request: Request) -> Response:
    """0 queued (then poll the result), -1 sold out, 1 already bought; 403 `bad_path` or
    `path_expired` (nothing taken); 503 `flash_queue_full`: nothing taken, try again."""
    raffle: Raffle = request.app.state.raffle
    session = await session_of(raffle, request.headers.get("Authorization"))
    sale_id = path_parameter(_SALE_ID, "sale_id", request.path_params["sale_id"])
    path = path_parameter(_PURCHASE_PATH, "purchase_path", request.path_params["purchase_path"])
    answer = await raffle.flash.purchase(sale_id, session.user_id, path, client_ip(request))
    return Response(_ANSWERS[answer], media_type="application/json")


route = Route(PATH, purchase, methods=["POST"], include_in_schema=False)


def document(openapi: Document) -> None:
    """Adds the purchase's operation to the OpenAPI document, as FastAPI wrote it."""
    parameters = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "schema": {**adapter.json_schema(), "title": name.replace("_", " ").title()},
        }
        for name, adapter in (("sale_id", _SALE_ID), ("purchase_path", _PURCHASE_PATH))
    ]
    operation = {
        "tags": ["player"],
        "summary": "Purchase",
        "description": inspect.cleandoc(purchase.__doc__ or ""),
        "operationId": "purchase_api_flash_sales__sale_id___purchase_path__purchase_post",
        "security": security(openapi, bearer),
        "parameters": parameters,
        "responses": {
            "200": {
                "description": "Successful Response",
                "content": {"application/json": {"schema": schema_ref(openapi, PurchaseOut)}},
            },
            **{str(s): r for s, r in documented(401, 403, 404, 409, 422, 429, 503).items()},
        },
    }
    openapi["paths"].setdefault(PATH, {})["post"] = operation
