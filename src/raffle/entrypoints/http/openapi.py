"""The OpenAPI document: FastAPI's, plus the path items of routes FastAPI does not serve, with
every problem an operation can answer and an example of everything it takes and answers."""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.security.base import SecurityBase
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from raffle.entrypoints.http.problems import MEDIA_TYPE, Problem, example

Document = dict[str, Any]

REF_TEMPLATE = "#/components/schemas/{model}"


def install(app: FastAPI, *extensions: Callable[[Document], None]) -> None:
    """FastAPI's documented recipe ("Extending OpenAPI"): `app.openapi` replaced by a
    function that builds FastAPI's document once and lets each extension add to it."""

    def openapi() -> Document:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                openapi_version=app.openapi_version,
                summary=app.summary,
                description=app.description,
                routes=app.routes,
                tags=app.openapi_tags,
                servers=app.servers,
                separate_input_output_schemas=app.separate_input_output_schemas,
            )
            for extend in (*extensions, complete):
                extend(document)
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # the recipe's own assignment


def schema_ref(document: Document, model: type[BaseModel]) -> dict[str, str]:
    """A reference to the model's answer schema, added to the components if not yet there."""
    refs, schema = models_json_schema([(model, "serialization")], ref_template=REF_TEMPLATE)
    components = document.setdefault("components", {}).setdefault("schemas", {})
    for name, definition in schema.get("$defs", {}).items():
        components.setdefault(name, definition)
    return {"$ref": refs[(model, "serialization")]["$ref"]}


def security(document: Document, scheme: SecurityBase) -> list[dict[str, list[str]]]:
    """The requirement of `scheme`, its definition added to the components if not yet there."""
    name = scheme.scheme_name
    schemes = document.setdefault("components", {}).setdefault("securitySchemes", {})
    schemes.setdefault(name, scheme.model.model_dump(mode="json", by_alias=True, exclude_none=True))
    return [{name: []}]


def complete(document: Document) -> None:
    """Every operation: its problems as problem+json (RFC 9457) with an example each, the
    refusals any operation can meet (a malformed body 400, no session 401, invalid input
    422, a part that did not answer 503), and the example of each schema it takes and
    answers lifted into it."""
    ref = schema_ref(document, Problem)
    components = document["components"]["schemas"]
    for operation in _operations(document):
        responses = operation["responses"]
        if "requestBody" in operation:
            responses.setdefault("400", {})
        if operation.get("security"):
            responses.setdefault("401", {})
        if "requestBody" in operation or operation.get("parameters"):
            responses.setdefault("422", {})
        responses.setdefault("503", {})
        for status, response in responses.items():
            if status.startswith("2"):
                continue
            response["description"] = HTTPStatus(int(status)).phrase
            declared = {  # an answer of the operation's own besides the problem (e.g. ready)
                media: body
                for media, body in response.get("content", {}).items()
                if body.get("schema", {}).get("$ref", "").rsplit("/", 1)[-1]
                not in ("", "HTTPValidationError")
            }
            problem = {"schema": ref, "example": example(int(status))}
            response["content"] = {**declared, MEDIA_TYPE: problem}
        answers = [r for s, r in responses.items() if s.startswith("2")]
        for body in (operation.get("requestBody", {}), *answers):
            for media in body.get("content", {}).values():
                found = _example_of(media.get("schema", {}), components)
                if "example" not in media and "examples" not in media and found is not None:
                    media["example"] = found
    for unused in ("HTTPValidationError", "ValidationError"):  # FastAPI's 422, replaced
        components.pop(unused, None)


def _operations(document: Document) -> list[Document]:
    return [op for item in document["paths"].values() for op in item.values()]


def _example_of(schema: Document, components: Document) -> Any:
    """The first example of `schema` (or of the component it refers to); of an array, a list
    of its items' example."""
    if "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[-1]]
    if examples := schema.get("examples"):
        return examples[0]
    if schema.get("type") == "array":
        item = _example_of(schema.get("items", {}), components)
        return None if item is None else [item]
    return None
