"""Instructions a draw costs through the whole app in one process, counted by callgrind.

Run: python -m bench.draw_instructions [--draws 200] [--activity 990103]   (from the
repository root; needs
valgrind, its headers and a C compiler: Debian's valgrind and gcc)

The embedded default (a SQLite file, in-process stock) serves `POST /api/activities/{id}/draws`
of bench/campaign.yaml through httpx's ASGI transport, one draw at a time, 50 players in
turn. The database is made first (migrations, the campaign, the players' sessions), outside
valgrind; then the app runs under `valgrind --tool=callgrind --instr-atstart=no` and counts
only the `--draws` after its warm-up: a three-line C library of callgrind's client requests,
compiled here, turns the counting on and off. Instructions do not move with other load on
the machine, as wall and CPU time do, so two commits compare on a shared machine (run the
same script with PYTHONPATH on each commit's `src`).
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import re
import secrets
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

PLAYERS = 50
WARM = 50  # draws before the counted ones: catalogue, seeds and statement caches filled
ACTIVITY = 990101  # --activity 990103: the one with two policies and a dynamic tag
COUNTING = """#include <valgrind/callgrind.h>
void start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
"""


def _settings(folder: Path):  # type: ignore[no-untyped-def]
    from raffle.settings import Settings

    return Settings(
        database_url=f"sqlite:///{folder / 'raffle.db'}",
        draws_per_second=1_000_000,
        log_level="warning",  # as bench/http.py serves: no line per request
        catalogue_ttl_seconds=3600,  # see draws()
    )


async def prepare(folder: Path) -> None:
    """The database the counted runs copy: migrated, the campaign loaded, players' sessions."""
    from raffle.adapters.campaign_file import read_campaign
    from raffle.adapters.sql.migrate import upgrade
    from raffle.bootstrap import bootstrap
    from raffle.domain.users import Session
    from raffle.service.auth import token_hash
    from raffle.service.campaigns import load_campaign

    settings = _settings(folder)
    await upgrade(settings.database_url)
    raffle = bootstrap(settings)
    campaign = read_campaign(Path(__file__).parent / "campaign.yaml")
    await load_campaign(campaign, raffle.uow(), raffle.tags, clock=raffle.clock)
    tokens = []
    for i in range(PLAYERS):
        token = secrets.token_urlsafe(32)
        at = datetime.now(UTC) + timedelta(hours=1)
        await raffle.sessions.create(Session(f"player{i}", False, at), token_hash(token), 3600)
        tokens.append(token)
    await raffle.close()
    (folder / "tokens").write_text("\n".join(tokens))


async def draws(folder: Path, count: int, counting: ctypes.CDLL, activity: int) -> None:
    import httpx

    from raffle.bootstrap import bootstrap
    from raffle.entrypoints import logs
    from raffle.entrypoints.http.app import create_app

    settings = _settings(folder)
    logs.configure(settings, sys.stderr)
    raffle = bootstrap(settings)
    # Under callgrind a draw takes ~0.5 s: caches kept a second would be read again every
    # other draw, which no draw does at thousands a second. Kept an hour, they count once.
    # A commit from before verifiable draws (to weigh what receipts cost) has no seeds.
    if hasattr(raffle, "seeds"):
        from raffle.service.fairness import SeedBook

        raffle.seeds = SeedBook(raffle.uow, ttl=3600)
    tokens = (folder / "tokens").read_text().split()
    app = create_app(raffle, scheduler=False)
    path = f"/api/activities/{activity}/draws"
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as client,
    ):
        for n in range(WARM + count):
            if n == WARM:
                counting.start()
            headers = {"Authorization": f"Bearer {tokens[n % PLAYERS]}"}
            answer = await client.post(path, headers={**headers, "Idempotency-Key": str(n)})
            assert answer.status_code == 201, answer.text
        counting.stop()
    await raffle.close()


def counted(folder: Path, count: int, activity: int) -> int:
    """Instructions of `count` draws after the warm-up, under callgrind."""
    source = folder / "counting.c"
    source.write_text(COUNTING)
    library = folder / "counting.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", library, source], check=True)
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=/dev/null",
         sys.executable, "-m", "bench.draw_instructions", "--inner", str(count),
         "--folder", folder, "--activity", str(activity)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    found = re.search(r"Collected : (\d+)", done.stderr)
    assert found, done.stderr[-2000:]
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--activity", type=int, default=ACTIVITY)
    parser.add_argument("--inner", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner is not None:
        counting = ctypes.CDLL(str(args.folder / "counting.so"))
        asyncio.run(draws(args.folder, args.inner, counting, args.activity))
        return
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(prepare(Path(folder)))
        total = counted(Path(folder), args.draws, args.activity)
    print(f"{total / args.draws:,.0f} instructions a draw ({args.draws} draws, {args.activity})")


if __name__ == "__main__":
    main()
