"""`raffle serve` in production mode refuses to start on a default that must not reach it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.conftest import MakeDatabaseUrl
from tests.raffle_process import RAFFLE, wait_until_serving
from tests.services import free_port

SERVERS = {
    "RAFFLE_DATABASE_URL": "postgresql://raffle:Xk29-vault@127.0.0.1:9/raffle",
    "RAFFLE_REDIS_URL": "redis://:Qm81-vault@127.0.0.1:9/0",
    "RAFFLE_BROKER_URL": "amqp://raffle:Zt57-vault@127.0.0.1:9/",
}


def serve(tmp_path: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAFFLE_")}
    return subprocess.run(
        [str(RAFFLE), "serve"],
        check=False,
        env=env | {"RAFFLE_ENV": "production"} | variables,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_production_mode_refuses_the_embedded_default(tmp_path: Path) -> None:
    done = serve(tmp_path)
    assert done.returncode != 0
    (line,) = done.stderr.splitlines()
    assert "RAFFLE_DATABASE_URL" in line
    assert not list(tmp_path.iterdir()), "refused before creating a database"


@pytest.mark.parametrize(
    ("variable", "default"),
    [
        ("RAFFLE_BROKER_URL", "amqp://guest:guest@127.0.0.1:9/"),
        ("RAFFLE_DATABASE_URL", "postgresql://postgres@127.0.0.1:9/raffle"),
        ("RAFFLE_REDIS_URL", "redis://127.0.0.1:9/0"),
    ],
)
def test_production_mode_names_the_server_url_with_a_default_password(
    tmp_path: Path, variable: str, default: str
) -> None:
    done = serve(tmp_path, **(SERVERS | {variable: default}))
    assert done.returncode != 0
    (line,) = done.stderr.splitlines()
    assert variable in line
    assert "password" in line
    assert default not in line


@pytest.fixture
async def database(make_database_url: MakeDatabaseUrl) -> str:
    return await make_database_url("postgres")


def test_production_mode_serves_with_passwords_of_its_own(tmp_path: Path, database: str) -> None:
    # The throwaway PostgreSQL trusts loopback connections: it ignores the password, which
    # production mode only needs to be there and not a default one.
    url = make_url(database).set(password="Xk29-vault")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAFFLE_")} | {
        "RAFFLE_ENV": "production",
        "RAFFLE_DATABASE_URL": url.render_as_string(hide_password=False),
        "RAFFLE_PORT": str(port),
    }
    migrated = subprocess.run(
        [str(RAFFLE), "migrate"], check=False, env=env, capture_output=True, text=True, timeout=120
    )
    assert migrated.returncode == 0, migrated.stderr
    server = subprocess.Popen([str(RAFFLE), "serve"], env=env, cwd=tmp_path)
    try:
        wait_until_serving(f"http://127.0.0.1:{port}", server)
    finally:
        server.terminate()
        server.wait(timeout=30)
