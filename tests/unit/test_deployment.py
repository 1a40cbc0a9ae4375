"""compose.yaml, deploy/ and the Dockerfile checked by shape, with or without Docker."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from raffle.settings import Settings

ROOT = Path(__file__).parents[2]
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
RAFFLE = {name for name, service in SERVICES.items() if service.get("image") == "raffle:local"}
PASSWORDS = {"POSTGRES_PASSWORD", "REDIS_PASSWORD", "RABBITMQ_PASSWORD"}
CONDITIONS = {"service_started", "service_healthy", "service_completed_successfully"}
# What compose substitutes: ${NAME}, ${NAME:?error}, ${NAME:-default} and the like.
VARIABLE = re.compile(r"\$\{(\w+)(?::?[-?+][^}]*)?\}")


def interpolated(value: object) -> str:
    """A value as compose passes it on, each password a made-up one of its own."""
    return VARIABLE.sub(lambda m: f"own-{m.group(1).lower()}-Zq7", str(value))


def settings_of(service: dict[str, Any]) -> dict[str, str]:
    environment = service["environment"]
    return {k: interpolated(v) for k, v in environment.items() if k.startswith("RAFFLE_")}


def test_the_raffle_services_are_the_migrations_two_api_processes_and_two_workers() -> None:
    assert sorted(RAFFLE) == ["api", "migrate", "worker"]
    assert {"postgres", "redis", "rabbitmq", "prometheus"} <= SERVICES.keys()
    commands = {name: SERVICES[name]["command"] for name in RAFFLE}
    assert commands == {
        "migrate": ["raffle", "migrate"],
        "api": ["raffle", "serve"],
        "worker": ["raffle", "worker"],
    }
    assert SERVICES["api"]["deploy"]["replicas"] == 2
    assert SERVICES["worker"]["deploy"]["replicas"] == 2
    assert SERVICES["migrate"]["restart"] == "no"  # one shot


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_every_service_has_an_image_and_depends_on_services_that_exist(name: str) -> None:
    service = SERVICES[name]
    assert re.fullmatch(r"[\w./-]+:[\w.-]+", service["image"]), "an image with its tag"
    if name in RAFFLE:
        assert service["build"] == "."
        assert (ROOT / "Dockerfile").is_file()
    for target, rule in service.get("depends_on", {}).items():
        assert target in SERVICES, f"{name} depends on {target}, which is not a service"
        assert target != name
        assert rule["condition"] in CONDITIONS
        if rule["condition"] == "service_healthy":
            has_own = "test" in SERVICES[target].get("healthcheck", {})
            assert has_own or target in RAFFLE, f"{target} has no healthcheck to wait for"
        if rule["condition"] == "service_completed_successfully":
            assert SERVICES[target]["restart"] == "no"


def test_api_and_workers_start_after_the_migrations_and_the_servers_are_up() -> None:
    for name in ("api", "worker"):
        after = SERVICES[name]["depends_on"]
        assert after["migrate"]["condition"] == "service_completed_successfully"
        assert after["redis"]["condition"] == after["rabbitmq"]["condition"] == "service_healthy"
    assert SERVICES["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"


@pytest.mark.parametrize("name", sorted(RAFFLE))
def test_the_raffle_services_settings_exist_and_pass_production_mode(name: str) -> None:
    environment = SERVICES[name]["environment"]
    known = {f"RAFFLE_{field.upper()}" for field in Settings.model_fields}
    assert set(settings_of(SERVICES[name])) <= known
    assert set(environment) - known <= {"FORWARDED_ALLOW_IPS"}  # uvicorn's, for the proxy
    if "FORWARDED_ALLOW_IPS" in environment:  # the proxy's address, not any client's
        (network,) = COMPOSE["networks"]["default"]["ipam"]["config"]
        assert environment["FORWARDED_ALLOW_IPS"] == network["subnet"]
    fields = {k.removeprefix("RAFFLE_").lower(): v for k, v in settings_of(SERVICES[name]).items()}
    settings = Settings(**fields)
    assert settings.env == "production"
    assert settings.redis_url is not None
    assert settings.broker_url is not None
    assert len(settings.database_urls) == 2


def test_the_only_variables_compose_needs_are_the_three_passwords() -> None:
    text = (ROOT / "compose.yaml").read_text()
    assert set(VARIABLE.findall(text)) == PASSWORDS
    for password in PASSWORDS:  # each one must be set: compose stops with the message
        assert f"${{{password}:?set {password}}}" in text
    guide = (ROOT / "docs" / "production.md").read_text()
    assert all(password in guide for password in PASSWORDS)


def test_published_ports_are_on_the_hosts_loopback_only() -> None:
    published = {n: s["ports"] for n, s in SERVICES.items() if "ports" in s}
    assert published.keys() == {"api", "prometheus"}
    for ports in published.values():
        for port in ports:
            assert re.fullmatch(r"127\.0\.0\.1:\d+(-\d+)?:\d+", port), port
    (api,) = published["api"]
    first, last = map(int, api.split(":")[1].split("-"))
    assert last - first + 1 == SERVICES["api"]["deploy"]["replicas"]  # a port each
    image_port = re.search(r"RAFFLE_PORT=(\d+)", (ROOT / "Dockerfile").read_text())
    assert image_port is not None
    assert api.rsplit(":", 1)[1] == image_port.group(1)


def test_files_mounted_from_the_repository_exist() -> None:
    for service in SERVICES.values():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), source
            else:
                assert source in COMPOSE["volumes"], f"{source}: a named volume, declared"


def test_prometheus_scrapes_metrics_of_every_api_process() -> None:
    config = yaml.safe_load((ROOT / "deploy" / "prometheus.yml").read_text())
    (job,) = config["scrape_configs"]
    assert job["metrics_path"] == "/metrics"
    (found,) = job["dns_sd_configs"]
    assert (found["names"], found["type"]) == (["api"], "A")  # one record per replica
    assert str(found["port"]) == SERVICES["api"]["ports"][0].rsplit(":", 1)[1]


def test_the_image_is_slim_runs_unprivileged_and_installs_no_extras() -> None:
    dockerfile = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())  # one line each
    instructions = [line.split(None, 1) for line in dockerfile.splitlines() if line[:1].isupper()]
    stages = [rest for word, rest in instructions if word == "FROM"]
    assert stages == ["python:3.11-slim AS build", "python:3.11-slim"]
    assert [rest for word, rest in instructions if word == "USER"] == ["raffle"]
    assert [rest for word, rest in instructions if word == "CMD"][-1] == '["raffle", "serve"]'
    assert "/api/health" in next(rest for word, rest in instructions if word == "HEALTHCHECK")
    installs = re.findall(r"pip (?:install|wheel)[^\n&]*", dockerfile)
    assert len(installs) == 2
    assert not any("[" in line or "-e " in line for line in installs), "no extras, no editable"
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ignored[ignored.index("*") :][:4] == ["*", "!pyproject.toml", "!README.md", "!src/"]
