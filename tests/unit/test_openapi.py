"""The OpenAPI document: every operation shows examples, and every problem it can answer is
problem+json with the Problem schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from raffle.bootstrap import bootstrap
from raffle.entrypoints.http import (
    content_schemas,
    engagement_schemas,
    participation_schemas,
    prize_pool_schemas,
    prize_schemas,
    route_tree_schemas,
    schemas,
    tag_schemas,
)
from raffle.entrypoints.http.app import create_app
from raffle.entrypoints.http.routes import campaigns, delivery
from raffle.settings import Settings

PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    database = tmp_path_factory.mktemp("openapi") / "raffle.db"
    app = create_app(bootstrap(Settings(database_url=f"sqlite:///{database}")), scheduler=False)
    return app.openapi()


def operations(document: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{method.upper()} {path}", operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ]


def test_every_operation_has_an_example_of_what_it_takes_and_answers(
    document: dict[str, Any],
) -> None:
    assert len(operations(document)) >= 35
    for name, operation in operations(document):
        bodies = [operation.get("requestBody", {}), *operation["responses"].values()]
        media = [m for body in bodies for m in body.get("content", {}).values()]
        assert media, name
        missing = [m for m in media if "example" not in m and "examples" not in m]
        assert not missing, (name, missing)
        if "requestBody" in operation:
            assert operation["requestBody"]["content"], name
        assert any(status.startswith("2") for status in operation["responses"]), name


def test_every_problem_is_problem_json_with_its_schema(document: dict[str, Any]) -> None:
    for name, operation in operations(document):
        problems = {s: r for s, r in operation["responses"].items() if not s.startswith("2")}
        assert "503" in problems, name
        if operation.get("parameters") or "requestBody" in operation:
            assert "422" in problems, name
        if "requestBody" in operation:
            assert "400" in problems, name
        if operation.get("security"):
            assert "401" in problems, name
        for status, response in problems.items():
            content = response["content"]["application/problem+json"]
            assert content["schema"] == PROBLEM_REF, (name, status)
            assert content["example"]["status"] == int(status), (name, status)
            # besides the problem, only an answer of the operation's own (ready's 503)
            others = set(response["content"]) - {"application/problem+json"}
            assert others <= ({"application/json"} if name.endswith("/ready") else set()), name
    problem = document["components"]["schemas"]["Problem"]
    assert {"type", "title", "status", "detail", "code"} <= set(problem["required"])
    assert {"errors", "retry_after", "current_state"} <= set(problem["properties"])
    assert "HTTPValidationError" not in document["components"]["schemas"]


def test_operator_routes_document_forbidden(document: dict[str, Any]) -> None:
    admin = [(n, op) for n, op in operations(document) if " /api/admin/" in n]
    assert admin
    assert all("403" in op["responses"] for _, op in admin)


def test_ids_are_bounded_to_positive_64_bit_integers(document: dict[str, Any]) -> None:
    for name, operation in operations(document):
        for parameter in operation.get("parameters", []):
            schema = parameter["schema"]
            if parameter["name"].endswith("id") and schema.get("type") == "integer":
                assert (schema["minimum"], schema["exclusiveMaximum"]) == (1, 2**63), name
    top_up = document["components"]["schemas"]["TopUpIn"]["properties"]
    assert top_up["sku"]["exclusiveMaximum"] == 2**63
    assert top_up["user_id"]["maxLength"] == 32


def test_every_number_string_and_list_a_request_carries_is_bounded(
    document: dict[str, Any],
) -> None:
    components = document["components"]["schemas"]

    def unbounded(schema: dict[str, Any], where: str) -> list[str]:
        if "$ref" in schema:
            return unbounded(components[schema["$ref"].rsplit("/", 1)[-1]], where)
        found = []
        for option in schema.get("anyOf", []):  # a length beside anyOf bounds its strings
            found += unbounded({"maxLength": schema.get("maxLength"), **option}, where)
        kind = schema.get("type")
        if kind == "string" and schema.get("maxLength") is None and "enum" not in schema:
            found += [] if "pattern" in schema or "format" in schema else [where]
        if kind in ("integer", "number"):
            low = "minimum" in schema or "exclusiveMinimum" in schema
            high = "maximum" in schema or "exclusiveMaximum" in schema
            found += [] if low and high else [where]
        if kind == "array":
            found += [] if "maxItems" in schema else [where]
            found += unbounded(schema.get("items", {}), f"{where}[]")
        for field, sub in schema.get("properties", {}).items():
            found += unbounded(sub, f"{where}.{field}")
        return found

    found = []
    for name, operation in operations(document):
        for parameter in operation.get("parameters", []):
            found += unbounded(parameter["schema"], f"{name} {parameter['name']}")
        for media in operation.get("requestBody", {}).get("content", {}).values():
            found += unbounded(media["schema"], f"{name} body")
    assert not found


def test_each_models_example_is_valid() -> None:
    modules = (
        schemas, engagement_schemas, prize_schemas, participation_schemas, route_tree_schemas,
        content_schemas,
        tag_schemas, campaigns, delivery, prize_pool_schemas,
    )  # fmt: skip
    models = [
        value
        for module in modules
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, BaseModel) and value is not BaseModel
    ]
    checked = 0
    for model in models:
        extra = model.model_config.get("json_schema_extra")
        for example in extra.get("examples", []) if isinstance(extra, dict) else []:
            assert (
                model.model_validate(example).model_dump(mode="json", exclude_unset=True) == example
            ), model
            checked += 1
    assert checked >= 35


def test_no_asset_of_the_docs_comes_from_elsewhere() -> None:
    source = Path(__file__).parents[2] / "src" / "raffle" / "entrypoints" / "http"
    assert "cdn." not in (source / "routes" / "docs.py").read_text()
