"""docs/grafana/raffle.json: a dashboard Grafana loads, over metrics /metrics really shows."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.ext.asyncio import create_async_engine

from raffle.adapters.metrics import PrometheusMetrics

DASHBOARD = Path(__file__).parents[2] / "docs" / "grafana" / "raffle.json"
DATASOURCE = {
    "type": "object",
    "required": ["type", "uid"],
    "properties": {"type": {"const": "prometheus"}, "uid": {"type": "string", "minLength": 1}},
}
# What Grafana needs of a dashboard to import it (its JSON model): the fields it reads
# without a default, in the types it expects.
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["title", "uid", "schemaVersion", "panels", "time", "templating"],
    "properties": {
        "title": {"type": "string", "minLength": 1},
        "uid": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,40}$"},
        "schemaVersion": {"type": "integer", "minimum": 30},
        "time": {
            "type": "object",
            "required": ["from", "to"],
            "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
        },
        "templating": {
            "type": "object",
            "required": ["list"],
            "properties": {"list": {"type": "array"}},
        },
        "panels": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id", "type", "title", "gridPos", "datasource", "targets"],
                "properties": {
                    "id": {"type": "integer", "minimum": 1},
                    "type": {"enum": ["timeseries", "stat", "gauge", "table", "bargauge"]},
                    "title": {"type": "string", "minLength": 1},
                    "datasource": DATASOURCE,
                    "gridPos": {
                        "type": "object",
                        "required": ["x", "y", "w", "h"],
                        "properties": {
                            "x": {"type": "integer", "minimum": 0, "maximum": 23},
                            "y": {"type": "integer", "minimum": 0},
                            "w": {"type": "integer", "minimum": 1, "maximum": 24},
                            "h": {"type": "integer", "minimum": 1},
                        },
                    },
                    "targets": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "required": ["refId", "expr", "datasource"],
                            "properties": {
                                "refId": {"type": "string", "pattern": "^[A-Z]$"},
                                "expr": {"type": "string", "minLength": 1},
                                "datasource": DATASOURCE,
                            },
                        },
                    },
                },
            },
        },
    },
}


def _dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def _shown() -> tuple[set[str], set[str]]:
    """The sample names /metrics shows once every metric has a value, and their families."""
    metrics = PrometheusMetrics()
    metrics.answered("GET", "/api/health", 200, 0.001)
    metrics.drawn(1, "win")
    metrics.refused("no_chances")
    metrics.refused_fast()
    metrics.delivered("points", "delivered")
    metrics.dead_lettered()
    metrics.published(0.1)
    metrics.job_ran("advance", failed=False)
    metrics.outbox(0, 0.0)
    metrics.stock_left(1, 2, 3)
    metrics.measure_pools({"db0": create_async_engine("postgresql+asyncpg://raffle@localhost/r")})
    families = list(text_string_to_metric_families(metrics.render().decode()))
    # A counter's creation time comes as a family of its own in the text format: no panel.
    shown = {f.name for f in families if not f.name.endswith("_created")}
    return {s.name for f in families for s in f.samples}, shown


def test_the_dashboard_has_the_shape_grafana_imports() -> None:
    dashboard = _dashboard()
    jsonschema.validate(dashboard, SCHEMA)
    panels = dashboard["panels"]
    assert len({p["id"] for p in panels}) == len(panels)
    assert all(p["gridPos"]["x"] + p["gridPos"]["w"] <= 24 for p in panels)
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    uids = {t["datasource"]["uid"] for p in panels for t in [p, *p["targets"]]}
    assert uids == {"${datasource}"}
    assert "datasource" in variables


def test_each_query_names_metrics_that_exist_and_every_metric_has_a_panel() -> None:
    samples, families = _shown()
    exprs = [t["expr"] for p in _dashboard()["panels"] for t in p["targets"]]
    named = {name for expr in exprs for name in re.findall(r"\braffle_[a-z_]+", expr)}
    assert named <= samples, f"not in /metrics: {named - samples}"
    unshown = {f for f in families if not any(n.startswith(f) for n in named)}
    assert unshown == set(), f"metrics with no panel: {unshown}"
