"""The OpenAPI document: FastAPI's, plus the path items of routes FastAPI does not serve."""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.security.base import SecurityBase
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from raffle.entrypoints.http.problems import MEDIA_TYPE, Problem

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
            for extend in extensions:
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


def problems(document: Document, *statuses: int) -> Document:
    """The `responses` of the problems an operation can answer with (problem+json)."""
    ref = schema_ref(document, Problem)
    return {
        str(status): {
            "description": HTTPStatus(status).phrase,
            "content": {MEDIA_TYPE: {"schema": ref}},
        }
        for status in statuses
    }
