"""An embedded raffle (SQLite, in-process stock) served in-process over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from raffle.adapters.campaign_file import read_campaign
from raffle.adapters.passwords import PasswordHasher
from raffle.adapters.sql.migrate import upgrade
from raffle.bootstrap import Raffle, bootstrap
from raffle.entrypoints.http.app import create_app
from raffle.service.auth import create_user
from raffle.service.campaigns import load_campaign
from raffle.settings import Settings

DEMO = Path(__file__).parents[2] / "examples" / "big-market.yaml"
ACTIVITY = 100301
PASSWORD = "correct horse battery"


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
        return {"Authorization": f"Bearer {answer.json()['token']}"}


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
