"""Verifiable draws on real servers: receipts of concurrent draws match once revealed, seeds
stay secret before, rotations publish the next commitment first, `raffle verify` names a
changed field."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import inspect

from raffle.adapters.sql.migrate import downgrade, upgrade
from raffle.adapters.sql.unit_of_work import create_engine
from raffle.bootstrap import Raffle
from raffle.domain.quota import NoChances, QuotaPack
from raffle.domain.receipts import FIELDS, OUT, SEALED, Receipt
from raffle.entrypoints.cli import main
from raffle.service.draw import Draw, DrawResult, draw
from raffle.service.fairness import ROTATION_GRACE, SeedBook, fairness
from raffle.service.receipts import my_receipt, verify
from tests.integration.raffles import WELCOME, Build, SettableClock, campaign
from tests.unit.test_receipts import flipped

IN_FLIGHT = 250


async def receipts(raffle: Raffle, users: int, each: int) -> list[tuple[str, DrawResult]]:
    """Every user's draws at once, at most IN_FLIGHT at a time: each with its user."""
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(user: str) -> tuple[str, DrawResult] | None:
        async with gate:
            try:
                return user, await draw(
                    Draw(user, 1), catalogue=raffle.catalogue, shards=raffle.shards,
                    stock=raffle.stock, rng=raffle.rng, clock=raffle.clock, hints=raffle.hints,
                    seeds=raffle.seeds,
                )  # fmt: skip
            except NoChances:
                return None

    found = await asyncio.gather(*(one(f"u{n}") for n in range(users) for _ in range(each)))
    return [r for r in found if r is not None]


async def checked(raffle: Raffle, receipt: Receipt, now: datetime) -> tuple[bool, tuple[str, ...]]:
    v = await verify(
        receipt, config=raffle.uow, catalogue=raffle.catalogue, seeds=raffle.seeds, now=now
    )
    return v.revealed, v.differs


async def test_receipts_of_concurrent_draws_match_once_the_seed_is_revealed(build: Build) -> None:
    clock = SettableClock(datetime(2026, 11, 21, 4, tzinfo=UTC))  # noon in Shanghai
    pack = QuotaPack(WELCOME, 10, 10, 10)
    raffle = await build(campaign(rate="0.5", stock=150, pack=pack, now=clock.current), clock)
    results = await receipts(raffle, 100, 5)  # 500 draws, the stock running out among them
    assert len(results) == 500
    drawn = [r.receipt for _, r in results if r.receipt is not None]
    assert len(drawn) == 500
    assert sum(r.award_id == 2 for r in drawn) == 150
    assert any(s[0] == OUT for r in drawn for s in r.trail.steps)  # found out mid-draw
    assert any(r.trail.exhausted for r in drawn)  # known as the draw began
    activity = await raffle.catalogue.activity(1)
    before = await fairness(activity, seeds=raffle.seeds, uow=raffle.uow(), now=clock.current)
    assert {r.commitment for r in drawn} == {before.current.commitment}
    assert before.revealed == []
    # Before the reveal nothing can be said.
    assert await checked(raffle, drawn[0], clock.current) == (False, ())
    # Read back by order id, each receipt is the one the draw answered.
    for user, result in results[:50]:
        again = await my_receipt(
            user, result.order_id, shards=raffle.shards, config=raffle.uow,
            catalogue=raffle.catalogue, seeds=raffle.seeds,
        )  # fmt: skip
        assert again == result.receipt

    await raffle.seeds.rotate(activity, clock.current)
    clock.current += ROTATION_GRACE
    after = await fairness(activity, seeds=raffle.seeds, uow=raffle.uow(), now=clock.current)
    assert after.current.commitment == before.next.commitment  # published before it took over
    assert [s.commitment for s in after.revealed] == [before.current.commitment]
    verdicts = [await checked(raffle, r, clock.current) for r in drawn]
    assert verdicts == [(True, ())] * len(drawn)
    [(_, later)] = await receipts(raffle, 1, 1)
    assert later.receipt is not None
    assert later.receipt.commitment == before.next.commitment


def _environment(raffle: Raffle, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line pointed at the raffle's databases and Redis."""
    s = raffle.settings
    monkeypatch.setenv("RAFFLE_DATABASE_URL", s.database_url)
    monkeypatch.setenv("RAFFLE_SHARD_URLS", s.shard_urls)
    monkeypatch.setenv("RAFFLE_SHARD_TABLES", str(s.shard_tables))
    if s.redis_url:
        monkeypatch.setenv("RAFFLE_REDIS_URL", s.redis_url)


def _lines(path: Path, receipts: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in receipts), encoding="utf-8")
    return path


def _changed(receipts: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Each receipt with one byte changed in one field, the fields taken in turn: the inputs,
    the commitment, the odds' hash, the outcome, and each input's seal (which names its input)."""
    kinds = [*FIELDS, *(f"seals.{n}" for n in SEALED)]
    changed = []
    for n, receipt in enumerate(receipts):
        kind = kinds[n % len(kinds)]
        if kind.startswith("seals."):
            name = kind.removeprefix("seals.")
            seals = {**receipt["seals"], name: flipped(receipt["seals"][name])}
            changed.append((name, {**receipt, "seals": seals}))
        else:
            changed.append((kind, {**receipt, kind: flipped(receipt[kind])}))
    return changed


@pytest.mark.parametrize("build", ["postgres+redis"], indirect=True)
async def test_raffle_verify_matches_10000_receipts_and_names_each_changed_field(
    build: Build, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Drawn three days ago: their period is over by now, its seed revealed to the command.
    clock = SettableClock(datetime.now(UTC) - timedelta(days=3))
    pack = QuotaPack(WELCOME, 5, 5, 5)
    raffle = await build(campaign(rate="0.2", stock=1500, pack=pack, now=clock.current), clock)
    results = await receipts(raffle, 2000, 5)
    drawn = [r.receipt.to_json() for _, r in results if r.receipt is not None]
    assert len(drawn) == 10_000
    assert any(r["trail"]["steps"] for r in drawn)  # the stock ran out among them
    changed = _changed(drawn)
    _environment(raffle, monkeypatch)

    # One run of the command over both files: 10,000 as issued, 10,000 with a byte changed.
    issued, forged = _lines(tmp_path / "all.jsonl", drawn), tmp_path / "changed.jsonl"
    _lines(forged, [r for _, r in changed])
    done = await asyncio.to_thread(CliRunner().invoke, main, ["verify", str(issued), str(forged)])
    assert done.exit_code == 1, done.output[-500:]
    said = done.output.splitlines()
    assert said[-1] == "20000 receipt(s): 10000 match, 10000 differ, 0 not revealed yet"
    assert said[:10_000] == [
        f"{issued}:{n} order {r['order_id']}: matches" for n, r in enumerate(drawn, 1)
    ]
    named = [line.split(": differs: ")[1].split(", ") for line in said[10_000:-1]]
    assert named == [[name] for name, _ in changed]
    assert {name for name, _ in changed} == {*FIELDS}


async def test_a_client_seed_set_in_one_process_reaches_the_others(build: Build) -> None:
    clock = SettableClock(datetime(2026, 11, 21, 4, tzinfo=UTC))
    raffle = await build(campaign(now=clock.current), clock)
    other = SeedBook(raffle.uow, ttl=0)  # another process's book, reading at every draw
    before = await other.client_seed("alice")
    assert before == await raffle.seeds.client_seed("alice")  # the default made from the id
    await raffle.seeds.set_client_seed("alice", "lucky-7", clock.current)
    await raffle.seeds.set_client_seed("bob", "b0b", clock.current + timedelta(seconds=1))
    assert await other.client_seed("alice") == "lucky-7"
    assert await other.client_seed("bob") == "b0b"
    await raffle.seeds.set_client_seed("alice", "lucky-8", clock.current + timedelta(seconds=2))
    assert await other.client_seed("alice") == "lucky-8"
    assert await other.client_seed("carol") not in {"lucky-8", "b0b"}


async def test_0025_undoes_itself_on_every_shard_table(database_url: str) -> None:
    await upgrade(database_url, shard_tables=4)
    await downgrade(database_url, "0024", shard_tables=4)
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            names = await connection.run_sync(lambda c: inspect(c).get_table_names())
            columns = await connection.run_sync(
                lambda c: [col["name"] for col in inspect(c).get_columns("raffle_order_003")]
            )
    finally:
        await engine.dispose()
    assert "draw_seed" not in names
    assert "client_seed" not in names
    assert "proof" not in columns
    await upgrade(database_url, shard_tables=4)
