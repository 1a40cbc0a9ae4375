"""Deny lists: draws against a 10,000-entry list (users, phones, CIDR ranges, device serials)
against draws with an empty one, alternated in one run; and the list's lookup alone.

    .venv/bin/python bench/deny_lists.py                        # embedded (a temporary SQLite)
    .venv/bin/python bench/deny_lists.py --kinds user,ip        # no phone, no serial listed
    .venv/bin/python bench/deny_lists.py --database-url postgresql://… --redis-url redis://…

Draws go through the whole application in this process (httpx's ASGI transport, no sockets),
so the figure is the list's cost against a draw's own, not a server's throughput. Each round
draws `--draws` with the list, then as many without; the ratio is of the summed rates.
Figures go to bench/README.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Python puts this folder first on sys.path, and bench/http.py would be imported for the
# standard library's `http` (which httpx imports): the folder is taken off, as http.py does.
BENCH = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH]

import argparse  # noqa: E402
import asyncio  # noqa: E402
import ipaddress  # noqa: E402
import secrets  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from datetime import UTC, datetime, timedelta  # noqa: E402

import httpx  # noqa: E402

from raffle.adapters.campaign_file import read_campaign  # noqa: E402
from raffle.adapters.passwords import PasswordHasher  # noqa: E402
from raffle.adapters.sql.migrate import upgrade  # noqa: E402
from raffle.bootstrap import Raffle, bootstrap  # noqa: E402
from raffle.domain.deny import DenyEntry, DenyKind, DenyList, network  # noqa: E402
from raffle.domain.profiles import Profile  # noqa: E402
from raffle.domain.users import Session  # noqa: E402
from raffle.entrypoints import logs  # noqa: E402
from raffle.entrypoints.http.app import create_app  # noqa: E402
from raffle.service.audit import deny_added  # noqa: E402
from raffle.service.auth import create_user, token_hash  # noqa: E402
from raffle.service.campaigns import load_campaign  # noqa: E402
from raffle.settings import Settings  # noqa: E402

DEMO = Path(__file__).parents[1] / "examples" / "big-market.yaml"
ACTIVITY, SPARE_SKU = 100301, 9013  # the demo's activity, and its SKU of 20 chances a day
PASSWORD = "bench password"
NOW = datetime.now(UTC)


def entries(count: int, kinds: list[DenyKind]) -> list[DenyEntry]:
    """As many of each kind (ranges: IPv4 /8 to /32 and IPv6 /32 to /128), none of them the
    bench's players or its client address."""
    found = []
    for n in range(count):
        kind = kinds[n % len(kinds)]
        if kind is DenyKind.USER:
            value = f"abuser{n}"
        elif kind is DenyKind.PHONE:
            value = f"+86139{n:08d}"
        elif kind is DenyKind.SN:
            value = f"SN-{secrets.token_hex(6)}"
        elif n // len(kinds) % 2:
            address = ipaddress.IPv4Address(secrets.randbits(32) | (1 << 31))  # never 127/8
            value = network(f"{address}/{8 + n % 25}")
        else:
            value = network(f"2001:db8:{n:x}::/{32 + n % 97}")
        found.append(DenyEntry(kind, value, "bench", "bench", NOW))
    return found


def lookups(listed: DenyList, count: int) -> float:
    """Nanoseconds a check takes, as the draw makes it (a user, phone, serial, address)."""
    started = time.perf_counter()
    for _ in range(count):
        listed.denies(user="player1", phone="+8613800138000", sn="SN-player", ip="127.0.0.1")
    return (time.perf_counter() - started) / count * 1e9


async def players(raffle: Raffle, count: int) -> list[dict[str, str]]:
    """Players with a profile (phone and serial: the list's checks read them) and chances."""
    care = raffle.profile_care()
    headers = []
    for n in range(count):
        name = f"player{n}"
        await create_user(name, PASSWORD, False, raffle.uow(), raffle.hasher)
        async with care.uow() as uow:
            profile = Profile(name, phone=f"+86138{n:08d}", sn=f"SN-player{n}")
            await uow.profiles.put(profile, NOW)
            await uow.commit()
        token = secrets.token_urlsafe(32)  # a session as login makes one, unthrottled
        expires = NOW + timedelta(days=1)
        await raffle.sessions.create(Session(name, False, expires), token_hash(token), 86400)
        headers.append({"Authorization": f"Bearer {token}"})
    return headers


async def top_up(client: httpx.AsyncClient, root: dict[str, str], count: int) -> None:
    for n in range(count):
        body = {"user_id": f"player{n}", "sku": SPARE_SKU, "out_business_no": f"bench-{n}"}
        answer = await client.post("/api/admin/top-ups", json=body, headers=root)
        assert answer.is_success, answer.text


async def draws(
    client: httpx.AsyncClient, headers: list[dict[str, str]], count: int, start: int
) -> tuple[float, float]:
    """Draws a second of wall time and of this process's CPU time (less moved by other
    processes on a shared machine), `count` of them, 32 in flight, round the players from
    `start`."""
    path = f"/api/activities/{ACTIVITY}/draws"
    queue = iter(range(start, start + count))

    async def drawer() -> None:
        for n in queue:
            auth = headers[n % len(headers)]
            answer = await client.post(path, headers={**auth, "Idempotency-Key": uuid.uuid4().hex})
            assert answer.status_code == 201, answer.text

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(drawer() for _ in range(32)))
    return count / (time.perf_counter() - started), count / (time.process_time() - cpu)


async def main(args: argparse.Namespace, folder: Path) -> None:
    settings = Settings(
        database_url=args.database_url or f"sqlite:///{folder / 'bench.db'}",
        redis_url=args.redis_url,
        draws_per_second=100_000,
    )
    logs.configure(Settings(log_level="error"))  # a line per request would be the bench
    await upgrade(settings.database_url)
    raffle = bootstrap(settings)
    raffle.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    await load_campaign(read_campaign(DEMO), raffle.uow())
    await raffle.start()
    kinds = [DenyKind(k) for k in args.kinds.split(",")]
    listed = entries(args.entries, kinds)
    full = DenyList(listed, NOW)
    print(f"lookup: {lookups(DenyList(), 100_000):,.0f} ns empty, "
          f"{lookups(full, 100_000):,.0f} ns with {args.entries:,} entries")  # fmt: skip
    await raffle.deny.store.add_many(listed, deny_added)  # audited, as an operator's import
    await raffle.deny.refresh()
    assert raffle.deny.version > 0
    transport = httpx.ASGITransport(app=create_app(raffle, scheduler=False))
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        await create_user("root", PASSWORD, True, raffle.uow(), raffle.hasher)
        login = await client.post("/api/auth/login", json={"name": "root", "password": PASSWORD})
        root = {"Authorization": f"Bearer {login.json()['token']}"}
        needed = 2 * args.rounds * args.draws // 20 + 1  # 20 chances a player (and the welcome 3)
        headers = await players(raffle, needed)
        await top_up(client, root, needed)
        await draws(client, headers, 200, 0)  # warm: caches, profiles, accounts opened
        drawn, walls, cpus = 200, {"with": 0.0, "without": 0.0}, {"with": 0.0, "without": 0.0}
        for round_ in range(args.rounds):
            for label, deny_list in (("with", full), ("without", DenyList())):
                raffle.deny.list = deny_list
                wall, cpu = await draws(client, headers, args.draws, drawn)
                drawn += args.draws
                walls[label] += wall
                cpus[label] += cpu
                print(f"round {round_ + 1} {label:>7}: {wall:,.0f} draws/s, "
                      f"{cpu:,.0f} draws per CPU second")  # fmt: skip
    print(f"ratio with/without: {walls['with'] / walls['without']:.3f} (wall), "
          f"{cpus['with'] / cpus['without']:.3f} (CPU)")  # fmt: skip
    await raffle.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--draws", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--database-url", help="an empty database (default: a new SQLite file)")
    parser.add_argument("--redis-url", help="with --database-url: sessions, stock, news")
    parser.add_argument(
        "--kinds",
        default="user,phone,ip,sn",
        help="user,ip alone: the players' profiles are not read (see docs/deny-lists.md)",
    )
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main(parser.parse_args(), Path(tmp)))
