"""A deny entry reaches every process: `raffle serve --workers 2` on PostgreSQL and Redis, a
kept-alive connection to each worker, a player of each denied and lifted through the admin
API on another connection, and every worker refusing (then admitting) them: each worker
checks its own copy of the list, told of the change through Redis pub/sub."""

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
from tests.e2e.test_switches_processes import (
    WORKERS,
    Player,
    _children,
    _prepare,
    _serving,
    _worker_of,
)
from tests.services import free_port

PLAYERS = [f"denied{n}" for n in range(24)]  # enough for the kernel to reach every worker
DEADLINE_SECONDS = 15.0  # how long to wait for a change before failing: not a speed bound
# An activity no one configured: a draw there is 404 for an admitted player and 403 for a
# denied one (the list is checked first), and never spends a chance.
NOWHERE = "/api/activities/999999/draws"


def _status(player: Player) -> int:
    player.connection.request("POST", NOWHERE, headers=player.auth)
    answer = player.connection.getresponse()
    answer.read()
    return answer.status


def _until(player: Player, status: int) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while (found := _status(player)) != status:
        assert found in (403, 404), found
        assert time.monotonic() < deadline, f"{player.name} still answered {found}"
        time.sleep(0.1)


def _admin(operator: http.client.HTTPConnection, auth: dict[str, str], method: str, path: str,
           body: object = None) -> dict[str, object]:  # fmt: skip
    headers = auth | {"Idempotency-Key": str(uuid.uuid4()), "Content-Type": "application/json"}
    operator.request(method, path, json.dumps(body) if body is not None else None, headers)
    answer = operator.getresponse()
    found: dict[str, object] = json.loads(answer.read())
    assert answer.status == 200, found
    return found


def _deny_and_lift(settings: Settings, folder: Path) -> None:
    with _serving(settings, folder) as (base, server):
        root = httpx.post(f"{base}/api/auth/login", json={"name": "root", "password": PASSWORD})
        auth = {"Authorization": f"Bearer {root.json()['token']}"}
        port = int(base.rsplit(":", 1)[1])
        operator = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        players: dict[int, Player] = {}
        opened: list[Player] = []
        try:
            for name in PLAYERS:
                player = Player(base, name)
                opened.append(player)
                assert _status(player) == 404  # admitted: the activity is what is missing
                players.setdefault(_worker_of(player.connection, _children(server)), player)
                if len(players) == WORKERS:
                    break
            assert len(players) == WORKERS, f"reached {len(players)} of {WORKERS} workers"
            entries = []
            for player in players.values():
                entry = {"kind": "user", "value": player.name, "reason": "test"}
                entries.append(_admin(operator, auth, "POST", "/api/admin/deny-list", entry))
            for player in players.values():
                _until(player, 403)
            for entry in entries:
                _admin(operator, auth, "DELETE", f"/api/admin/deny-list/{entry['id']}")
            for player in players.values():
                _until(player, 404)
        finally:
            operator.close()
            for player in opened:
                player.connection.close()


async def test_a_deny_entry_and_its_lifting_reach_every_worker(
    tmp_path: Path, make_database_url: Callable[[str], Awaitable[str]], redis_url: str
) -> None:
    settings = Settings(
        database_url=await make_database_url("postgres"), redis_url=redis_url, port=free_port()
    )
    await _prepare(settings, ["root", *PLAYERS])
    await asyncio.to_thread(_deny_and_lift, settings, tmp_path)
