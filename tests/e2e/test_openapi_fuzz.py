"""schemathesis over the served OpenAPI document, as a player and as an operator: no server
error, and every status and content type answered is one the document lists."""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, status_code_conformance

from raffle.bootstrap import bootstrap
from raffle.domain.users import Session
from raffle.service import auth
from raffle.settings import Settings
from tests.raffle_process import RAFFLE, wait_until_serving
from tests.services import free_port

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance]
# JSON Lines bodies (profile imports) are text: sent as generated, as text/csv ones are.
schemathesis.serializer.alias(
    ["application/x-ndjson", "application/jsonl", "application/x-jsonlines"], "text/plain"
)
# Packed campaign files (zips) are bytes: sent as generated.
schemathesis.serializer.alias("application/zip", "application/octet-stream")
PASSWORD = "correct horse battery"
LOGOUT = "/api/auth/logout"
# Small and bounded: a few requests of each kind per operation, no shrinking of a failure
# (its request is printed as it was sent).
BOUNDED = settings(
    max_examples=6,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)


@dataclass
class Served:
    base: str
    players: dict[str, str]  # role -> Authorization header value
    spare: list[str]  # Authorization header values of sessions the logouts may end


async def sessions(settings: Settings, count: int) -> list[str]:
    """Sessions of their own for the logouts the run sends, opened in the server's database
    (the sessions of the embedded default): the run's own must outlive them, and HTTP
    logins would meet the per-address limit the generated logins use up."""
    raffle = bootstrap(settings)
    try:
        tokens = [secrets.token_urlsafe(32) for _ in range(count)]
        until = raffle.clock.now() + timedelta(hours=1)
        for token in tokens:
            session = Session("fuzz-player", is_admin=False, expires_at=until)
            await raffle.sessions.create(session, auth.token_hash(token), 3600)
    finally:
        await raffle.close()
    return [f"Bearer {token}" for token in tokens]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("fuzz")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAFFLE_")}
    env |= {
        "RAFFLE_DATABASE_URL": f"sqlite:///{folder / 'raffle.db'}",
        "RAFFLE_PORT": str(port),
        "RAFFLE_DRAWS_PER_SECOND": "1000",
    }
    settings = Settings(database_url=env["RAFFLE_DATABASE_URL"])
    subprocess.run([str(RAFFLE), "migrate"], env=env, check=True, capture_output=True)
    for name, admin in (("fuzz-operator", True), ("fuzz-player", False)):
        command = [str(RAFFLE), "user", "create", name, "--password", PASSWORD]
        subprocess.run([*command, *(["--admin"] if admin else [])], env=env, check=True)
    log = folder / "server.log"
    with log.open("wb") as output:
        server = subprocess.Popen(
            [str(RAFFLE), "serve"], env=env, cwd=folder, stdout=output, stderr=output
        )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_serving(base, server)
        headers = {}
        for role, name in (("operator", "fuzz-operator"), ("player", "fuzz-player")):
            login = httpx.post(f"{base}/api/auth/login", json={"name": name, "password": PASSWORD})
            headers[role] = f"Bearer {login.json()['token']}"
        yield Served(base, headers, asyncio.run(sessions(settings, 100)))
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert b"Traceback" not in log.read_bytes(), log.read_text()


@pytest.fixture(scope="module")
def served_schema(served: Served) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(f"{served.base}/openapi.json")


def fuzz(schema: schemathesis.BaseSchema, served: Served, role: str) -> None:
    """Each operation with its documented examples, then requests that fit its schema and
    requests that do not, a few of each; every failure listed at the end."""
    failures = []
    for result in schema.get_all_operations():
        operation = result.ok()
        strategies = [
            *operation.get_strategies_from_examples(),
            operation.as_strategy(GenerationMode.POSITIVE),
            operation.as_strategy(GenerationMode.NEGATIVE),
        ]
        for strategy in strategies:

            @BOUNDED
            @given(case=strategy)
            def check(case: schemathesis.Case) -> None:
                call(case, served, role)

            try:
                check()
            except Unsatisfiable:
                pass  # nothing to get wrong: an operation without parameters or body
            except Exception as failure:
                failures.append(f"{operation.label}: {failure}")
    assert not failures, "\n\n".join(failures)


# Framing headers are the HTTP client's and server's: a generated one (a negative case's
# `content-length: gdF*V`) is refused by uvicorn's parser (400) before the API sees it.
FRAMING = frozenset({"content-length", "transfer-encoding", "host", "connection"})


def call(case: schemathesis.Case, served: Served, role: str) -> None:
    if case.headers:
        case.headers = {k: v for k, v in case.headers.items() if k.lower() not in FRAMING}
    token = served.spare.pop() if case.path == LOGOUT else served.players[role]
    case.call_and_validate(base_url=served.base, headers={"Authorization": token}, checks=CHECKS)


def test_as_a_player(served_schema: schemathesis.BaseSchema, served: Served) -> None:
    fuzz(served_schema, served, "player")


def test_as_an_operator(served_schema: schemathesis.BaseSchema, served: Served) -> None:
    fuzz(served_schema, served, "operator")
