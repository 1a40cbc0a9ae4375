"""A profile change reaches every process: `raffle serve --workers 2` on PostgreSQL and Redis,
a kept-alive connection to each worker reading a player's profile (now kept in that
worker), the profiles replaced through the admin API, and every worker answering the new
ones well before a kept profile's time to live: told through Redis pub/sub."""

from __future__ import annotations

import asyncio
import http.client
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from raffle.settings import Settings
from tests.e2e.conftest import PASSWORD
from tests.e2e.test_switches_processes import WORKERS, _children, _prepare, _serving, _worker_of
from tests.services import free_port

PLAYERS = [f"reader{n}" for n in range(24)]  # enough for the kernel to reach every worker
DEADLINE_SECONDS = 15.0  # well under RAFFLE_PROFILE_TTL_SECONDS (60): only news can do it


class Reader:
    """A player whose requests all go to one worker, over one kept-alive connection."""

    def __init__(self, base: str, name: str) -> None:
        self.name = name
        login = httpx.post(f"{base}/api/auth/login", json={"name": name, "password": PASSWORD})
        self.auth = {"Authorization": f"Bearer {login.json()['token']}"}
        self.connection = http.client.HTTPConnection("127.0.0.1", int(base.rsplit(":", 1)[1]))

    def level(self) -> int:
        self.connection.request("GET", "/api/me/profile", headers=self.auth)
        answer = self.connection.getresponse()
        body = json.loads(answer.read())
        assert answer.status == 200, body
        return int(body["level"])


def _change_and_watch(settings: Settings, folder: Path) -> None:
    with _serving(settings, folder) as (base, server):
        root = httpx.post(f"{base}/api/auth/login", json={"name": "root", "password": PASSWORD})
        admin = {"Authorization": f"Bearer {root.json()['token']}"}
        readers: dict[int, Reader] = {}
        opened: list[Reader] = []
        opened_admin: list[http.client.HTTPConnection] = []
        try:
            for name in PLAYERS:
                reader = Reader(base, name)
                opened.append(reader)
                assert reader.level() == 0  # read, and now kept by its worker
                readers.setdefault(_worker_of(reader.connection, _children(server)), reader)
                if len(readers) == WORKERS:
                    break
            assert len(readers) == WORKERS, f"reached {len(readers)} of {WORKERS} workers"
            # Every change through one worker: the other hears of it only through Redis.
            operator = http.client.HTTPConnection("127.0.0.1", int(base.rsplit(":", 1)[1]))
            opened_admin.append(operator)
            for level, reader in enumerate(readers.values(), 3):
                headers = admin | {"Idempotency-Key": str(uuid.uuid4()),
                                   "Content-Type": "application/json"}  # fmt: skip
                body = json.dumps({"level": level})
                operator.request("PUT", f"/api/admin/profiles/{reader.name}", body, headers)
                answer = operator.getresponse()
                assert answer.status == 200, answer.read()
                answer.read()
            for level, reader in enumerate(readers.values(), 3):
                deadline = time.monotonic() + DEADLINE_SECONDS
                while (seen := reader.level()) != level:
                    assert time.monotonic() < deadline, f"{reader.name} still reads {seen}"
                    time.sleep(0.1)
        finally:
            for connection in [*(r.connection for r in opened), *opened_admin]:
                connection.close()


async def test_a_changed_profile_is_read_anew_by_every_worker(
    tmp_path: Path, make_database_url: Callable[[str], Awaitable[str]], redis_url: str
) -> None:
    settings = Settings(
        database_url=await make_database_url("postgres"), redis_url=redis_url, port=free_port()
    )
    await _prepare(settings, ["root", *PLAYERS])
    await asyncio.to_thread(_change_and_watch, settings, tmp_path)
