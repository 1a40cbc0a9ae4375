"""A switch reaches every process: `raffle serve --workers 2` on PostgreSQL and Redis, one
connection held to each worker, an activity's draws switched off and on through the admin
API of either, and the next draw on each connection follows it."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import subprocess
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import httpx

from raffle.adapters.campaign_file import read_campaign
from raffle.adapters.passwords import PasswordHasher
from raffle.adapters.sql.migrate import upgrade
from raffle.bootstrap import bootstrap
from raffle.service.auth import create_user
from raffle.service.campaigns import load_campaign
from raffle.settings import Settings
from tests.e2e.conftest import ACTIVITY, DEMO, PASSWORD
from tests.raffle_process import RAFFLE, wait_until_serving
from tests.services import free_port

WORKERS = 2
DEADLINE_SECONDS = 15.0  # how long to wait for a change before failing: not a speed bound
STARTUP_SECONDS = 180.0  # two workers importing everything, on a machine shared with others
SPARE_CHANCES_SKU = 9013  # the demo's SKU of 20 chances, 20 a day
PLAYERS = [f"player{n}" for n in range(24)]  # enough for the kernel to reach every worker
DRAWS = f"/api/activities/{ACTIVITY}/draws"


async def _prepare(settings: Settings, names: list[str]) -> None:
    """The demo campaign, an operator and players, stored before the server starts."""
    await upgrade(settings.database_url)
    raffle = bootstrap(settings)
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    try:
        await load_campaign(read_campaign(DEMO), raffle.uow())
        for name in names:
            await create_user(name, PASSWORD, name == "root", raffle.uow(), raffle.hasher)
    finally:
        await raffle.close()


@contextlib.contextmanager
def _serving(settings: Settings, folder: Path) -> Iterator[tuple[str, int]]:
    """The server's address and process id."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAFFLE_")}
    env |= {
        "RAFFLE_DATABASE_URL": settings.database_url,
        "RAFFLE_REDIS_URL": str(settings.redis_url),
        "RAFFLE_PORT": str(settings.port),
        "RAFFLE_DRAWS_PER_SECOND": "1000",
    }
    log = folder / "server.log"
    with log.open("w") as output:
        server = subprocess.Popen(
            [str(RAFFLE), "serve", "--workers", str(WORKERS)],
            env=env,
            cwd=folder,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        base = f"http://127.0.0.1:{settings.port}"
        try:
            wait_until_serving(base, server, STARTUP_SECONDS)
        except AssertionError as error:
            raise AssertionError(f"{error}; its log:\n{log.read_text()[-3000:]}") from None
        yield base, server.pid
    finally:
        server.terminate()
        server.wait(timeout=30)


def _children(pid: int) -> set[int]:
    """Every process under `pid` (the server's workers), from /proc."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            text = stat.read_text()
            parents[int(stat.parent.name)] = int(text[text.rindex(")") + 2 :].split()[1])
    found: set[int] = set()
    todo = [pid]
    while todo:
        parent = todo.pop()
        kids = {p for p, pp in parents.items() if pp == parent}
        found |= kids
        todo += kids
    return found


def _worker_of(connection: http.client.HTTPConnection, candidates: set[int]) -> int:
    """The process holding the server's end of `connection` (from /proc/net/tcp)."""
    assert connection.sock is not None
    client_port = connection.sock.getsockname()[1]
    server_port = connection.sock.getpeername()[1]
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote = (int(f.rsplit(":", 1)[1], 16) for f in fields[1:3])
            if (local, remote) == (server_port, client_port):
                inodes.add(f"socket:[{fields[9]}]")
    for pid in candidates:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) in inodes:
                        return pid
    raise AssertionError("no worker holds the connection")


class Player:
    """A player with a kept-alive connection: every request goes to the same worker."""

    def __init__(self, base: str, name: str) -> None:
        self.name = name
        login = httpx.post(f"{base}/api/auth/login", json={"name": name, "password": PASSWORD})
        self.auth = {"Authorization": f"Bearer {login.json()['token']}"}
        port = int(base.rsplit(":", 1)[1])
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)

    def draw(self) -> tuple[int, str]:
        self.connection.request("POST", DRAWS, headers=self.auth)
        answer = self.connection.getresponse()
        body = answer.read()
        code = json.loads(body).get("code", "") if answer.status != 201 else ""
        return answer.status, code

    def until(self, status: int) -> None:
        """Draws until one answers `status`, failing after the deadline."""
        deadline = time.monotonic() + DEADLINE_SECONDS
        while (found := self.draw())[0] != status:
            assert found[0] in (201, 503), found
            assert time.monotonic() < deadline, f"still {found} after {DEADLINE_SECONDS} s"
            time.sleep(0.2)


def _one_player_per_worker(
    base: str, names: Iterator[str], server: int, opened: list[Player]
) -> list[Player]:
    """Players whose connections land on each worker, one each (the kernel spreads them);
    every player made is in `opened`."""
    found: dict[int, Player] = {}
    for name in names:
        player = Player(base, name)
        opened.append(player)
        assert player.draw() == (201, "")  # connected, and drawing
        found.setdefault(_worker_of(player.connection, _children(server)), player)
        if len(found) == WORKERS:
            return list(found.values())
    raise AssertionError(f"connections reached {len(found)} of {WORKERS} workers")


@contextlib.contextmanager
def _closing(players: list[Player]) -> Iterator[None]:
    try:
        yield
    finally:
        for player in players:
            player.connection.close()


def _top_up(base: str, auth: dict[str, str], user_id: str) -> None:
    answer = httpx.post(
        f"{base}/api/admin/top-ups",
        json={"user_id": user_id, "sku": SPARE_CHANCES_SKU, "out_business_no": f"spare-{user_id}"},
        headers=auth,
    )
    assert answer.status_code == 200, answer.text


def _set(base: str, auth: dict[str, str], value: str) -> None:
    answer = httpx.put(
        f"{base}/api/admin/switches/activity.{ACTIVITY}.draws",
        json={"value": value},
        headers=auth | {"Idempotency-Key": str(uuid.uuid4())},
    )
    assert answer.status_code == 200, answer.text


async def test_paused_draws_reach_every_worker_and_resume_and_are_audited(
    tmp_path: Path,
    make_database_url: Callable[[str], Awaitable[str]],
    redis_url: str,
) -> None:
    settings = Settings(
        database_url=await make_database_url("postgres"), redis_url=redis_url, port=free_port()
    )
    await _prepare(settings, ["root", *PLAYERS])
    # The processes are driven with blocking calls: off the test's event loop.
    await asyncio.to_thread(_pause_and_resume, settings, tmp_path)


def _pause_and_resume(settings: Settings, folder: Path) -> None:
    opened: list[Player] = []
    with _serving(settings, folder) as (base, server), _closing(opened):
        connected = _one_player_per_worker(base, iter(PLAYERS), server, opened)
        login = httpx.post(f"{base}/api/auth/login", json={"name": "root", "password": PASSWORD})
        root = {"Authorization": f"Bearer {login.json()['token']}"}
        for player in connected:  # chances to spare for draws before a worker hears of it
            _top_up(base, root, player.name)
        _set(base, root, "off")
        for player in connected:
            player.until(503)
            assert player.draw() == (503, "draws_paused")
        _set(base, root, "on")
        for player in connected:
            player.until(201)
        audit = httpx.get(f"{base}/api/admin/switches/audit", headers=root).json()
        assert [(c["name"], c["new"], c["actor"]) for c in audit] == [
            (f"activity.{ACTIVITY}.draws", "on", "root"),
            (f"activity.{ACTIVITY}.draws", "off", "root"),
        ]
