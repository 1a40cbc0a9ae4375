"""An embedded raffle (SQLite, in-process stock) served in-process over HTTP, and the check
that fails a test whose servers, in-process or not, answered a request with a 5xx."""

from __future__ import annotations

import io
import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx
import pytest
import structlog

from raffle.adapters.campaign_file import read_campaign
from raffle.adapters.passwords import PasswordHasher
from raffle.adapters.sql.migrate import upgrade
from raffle.bootstrap import Raffle, bootstrap
from raffle.entrypoints import logs
from raffle.entrypoints.http.app import create_app
from raffle.service.auth import create_user
from raffle.service.campaigns import load_campaign
from raffle.settings import Settings
from tests.raffle_process import server_errors

DEMO = Path(__file__).parents[2] / "examples" / "big-market.yaml"
ACTIVITY = 100301
PASSWORD = "correct horse battery"
ISSUED: set[str] = set()  # every session token Api.login was given, over the whole suite


def _check_server_log(request: pytest.FixtureRequest, log: str) -> None:
    if request.node.get_closest_marker("server_errors") is None and (errors := server_errors(log)):
        pytest.fail(f"the server answered {len(errors)} request(s) with a 5xx: {errors}")
    leaked = [s for s in (PASSWORD, "Bearer", *ISSUED) if s in log]
    if leaked:
        pytest.fail(f"a password or token reached the log: {len(leaked)} of them")


@pytest.fixture(autouse=True)
def server_log(request: pytest.FixtureRequest) -> Iterator[io.StringIO]:
    """The log lines of in-process servers during the test, as JSON; the test fails on a
    request answered with a 5xx unless marked `server_errors` (one that answers it on
    purpose), and on a password or session token in any line."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    stream = io.StringIO()
    logs.configure(Settings(log_format="json", log_level="info"), stream)
    try:
        yield stream
    finally:
        root.handlers[:], root.level = handlers, level
        structlog.reset_defaults()
    _check_server_log(request, stream.getvalue())


@pytest.fixture
def server_stderr(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[IO[str]]:
    """A file for a `raffle` process's stderr (run it with RAFFLE_LOG_FORMAT=json): the test
    fails on a request the process answered with a 5xx, as with `server_log`."""
    path = tmp_path_factory.mktemp("server") / "stderr.log"
    with path.open("w") as file:
        yield file
    _check_server_log(request, path.read_text())


@dataclass
class Api:
    raffle: Raffle
    client: httpx.AsyncClient

    async def login(self, name: str, *, admin: bool = False) -> dict[str, str]:
        """Create the account if needed and return its Authorization header."""
        async with self.raffle.uow() as uow:
            exists = await uow.users.get(name) is not None
        if not exists:
            await create_user(name, PASSWORD, admin, self.raffle.uow(), self.raffle.hasher)
        answer = await self.client.post(
            "/api/auth/login", json={"name": name, "password": PASSWORD}
        )
        assert answer.status_code == 200, answer.text
        ISSUED.add(token := answer.json()["token"])
        return {"Authorization": f"Bearer {token}"}


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'raffle.db'}", draws_per_second=1000)
    await upgrade(settings.database_url)
    raffle = bootstrap(settings)
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)  # fast tests
    await load_campaign(read_campaign(DEMO), raffle.uow())
    await raffle.start()
    app = create_app(raffle, scheduler=False)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://raffle.test") as client:
        yield Api(raffle, client)
    await raffle.close()
