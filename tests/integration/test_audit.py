"""The audit log on every database, over two shard databases: a thousand actions in flight
verify, hundreds appended to one chain at once keep it whole, and a row altered or deleted
is named, by `raffle audit verify` too (exit code 1)."""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.migrate import upgrade
from raffle.adapters.sql.repositories.deny import SqlDenyStore
from raffle.adapters.sql.tables.audit import audit_tables, config_audit
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.bootstrap import sql_shards
from raffle.domain.audit import CONFIG_CHAIN, GENESIS, entry_hash, shard_chain
from raffle.domain.deny import DenyEntry, DenyKind
from raffle.domain.fulfilment import AccessGrant
from raffle.domain.users import User
from raffle.service import accounts
from raffle.service.audit import ChainReport, deny_added, heads, record, verify
from raffle.service.effects import grant_access
from raffle.service.ports import Shards, UnitOfWork
from tests.conftest import BACKENDS, MakeDatabaseUrl
from tests.integration.raffles import SettableClock

TABLES = 2  # shard tables in each of the two databases
NOW = datetime(2026, 11, 25, 6, 0, 0, 123456, tzinfo=UTC)
IN_FLIGHT = 200


@dataclass
class World:
    urls: list[str]
    engines: list[AsyncEngine]
    shards: Shards
    clock: SettableClock

    def uow(self) -> UnitOfWork:
        return SqlUnitOfWork(self.engines[0])

    async def verified(self) -> list[ChainReport]:
        return await verify(self.uow, self.shards, page=97)  # pages end mid-chain


@pytest.fixture(params=BACKENDS)
async def w(
    request: pytest.FixtureRequest, make_database_url: MakeDatabaseUrl
) -> AsyncIterator[World]:
    urls = [await make_database_url(request.param) for _ in range(2)]
    for url in urls:
        await upgrade(url, shard_tables=TABLES)
    engines = [create_engine(url) for url in urls]
    yield World(urls, engines, sql_shards(engines, TABLES), SettableClock(NOW))
    for engine in engines:
        await engine.dispose()


async def _at_most(limit: int, work: list[Awaitable[object]]) -> None:
    turns = asyncio.Semaphore(limit)

    async def one(job: Awaitable[object]) -> None:
        async with turns:
            await job

    await asyncio.gather(*(one(job) for job in work))


async def _grant(w: World, n: int) -> None:
    user = f"u{n:04d}"
    at = NOW + timedelta(milliseconds=n)
    async with w.shards.for_user(user) as uow:
        assert await grant_access(uow, AccessGrant(user, f"course-{n % 7}", f"order-{n}", at))
        await uow.commit()


def _denial(n: int) -> DenyEntry:
    return DenyEntry(DenyKind.USER, f"mallory{n}", "chargebacks", "root", NOW)


async def _append(w: World, chain: int, count: int) -> None:
    """`count` actions on the chain at `chain` in `shards.every()`, each alone, at once."""

    async def one(n: int) -> None:
        async with w.shards.every()[chain] as uow:
            await record(uow.audit, "delivery.resend", f"order-{n}", NOW, actor="root")
            await uow.commit()

    await _at_most(IN_FLIGHT, [one(n) for n in range(count)])


async def _run(command: list[str], w: World) -> tuple[int, str]:
    env = {
        **os.environ,
        "RAFFLE_DATABASE_URL": w.urls[0],
        "RAFFLE_SHARD_URLS": w.urls[1],
        "RAFFLE_SHARD_TABLES": str(TABLES),
    }
    raffle = Path(sys.executable).parent / "raffle"
    process = await asyncio.create_subprocess_exec(
        str(raffle), *command, env=env, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode()


async def test_a_thousand_actions_in_flight_on_two_shard_databases_verify(w: World) -> None:
    async with w.uow() as uow:
        for n in range(10):
            assert await uow.users.add(User(f"player{n}", "hash"))
        await uow.commit()
    deny = SqlDenyStore(w.engines[0])
    work: list[Awaitable[object]] = [
        accounts.unlock(f"player{n % 10}", by="root", reason=f"#{n}", uow=w.uow(), clock=w.clock)
        for n in range(100)
    ]
    work += [deny.add(_denial(n), deny_added) for n in range(100)]
    work += [_grant(w, n) for n in range(800)]
    await _at_most(IN_FLIGHT, work)

    reports = await w.verified()
    assert [r.broken for r in reports] == [None] * (1 + 2 * TABLES)
    chains = [r.head.chain for r in reports]
    assert chains == [CONFIG_CHAIN, *(shard_chain(d, t) for d in (0, 1) for t in (0, 1))]
    assert reports[0].head.seq == 200  # the unlocks and the denials
    assert sum(r.head.seq for r in reports[1:]) == 800  # the grants, spread over the shards
    assert all(r.head.seq > 0 for r in reports)
    assert [r.head for r in reports] == await heads(w.uow, w.shards)


async def test_hundreds_of_appends_in_flight_keep_one_unbroken_chain(w: World) -> None:
    await _append(w, 3, 500)  # database 1, table 001

    [report] = [r for r in await w.verified() if r.head.chain == shard_chain(1, 1)]
    assert report.broken is None
    assert report.head.seq == 500
    table = audit_tables(1).entry
    async with w.engines[1].connect() as connection:
        rows = (await connection.execute(select(table).order_by(table.c.seq))).all()
    assert [r.seq for r in rows] == list(range(1, 501))
    assert rows[0].prev == GENESIS
    assert all(b.prev == a.hash for a, b in itertools.pairwise(rows))
    assert rows[-1].hash == report.head.hash


async def test_an_altered_row_is_named_by_raffle_audit_verify(w: World) -> None:
    await _append(w, 3, 12)
    code, out = await _run(["audit", "verify"], w)
    assert code == 0, out
    assert f"{shard_chain(1, 1)} #12 " in out

    table = audit_tables(1).entry
    async with w.engines[1].begin() as connection:
        await connection.execute(update(table).where(table.c.seq == 5).values(actor="mallory"))

    [broken] = [r.broken for r in await w.verified() if r.broken is not None]
    assert (broken.chain, broken.seq) == (shard_chain(1, 1), 5)
    assert "altered" in broken.what
    code, out = await _run(["audit", "verify"], w)
    assert code == 1, out
    assert f"{shard_chain(1, 1)}: BROKEN at #5: " in out
    assert f"{CONFIG_CHAIN} #0 {GENESIS}: ok" in out


async def test_a_hash_rewritten_with_its_row_breaks_the_next_link(w: World) -> None:
    async with w.uow() as uow:
        for n in range(4):
            await record(uow.audit, "campaign.load", f"activities {n}", NOW, actor="root")
        await uow.commit()
    # As a forger who knows the encoding would: the row and its own hash made to agree.
    forged = await _forged(w, 2, "activities 9")
    entry = config_audit.entry
    async with w.engines[0].begin() as connection:
        await connection.execute(
            update(entry).where(entry.c.seq == 2).values(subject="activities 9", hash=forged)
        )

    [broken] = [r.broken for r in await w.verified() if r.broken is not None]
    assert (broken.chain, broken.seq) == (CONFIG_CHAIN, 3)
    assert "previous hash" in broken.what


async def test_a_deleted_row_is_named_and_so_is_a_deleted_last_one(w: World) -> None:
    await _append(w, 0, 6)  # database 0, table 000
    await _append(w, 2, 6)  # database 1, table 000
    async with w.engines[0].begin() as connection:
        table = audit_tables(0).entry
        await connection.execute(delete(table).where(table.c.seq == 4))
    async with w.engines[1].begin() as connection:
        table = audit_tables(0).entry
        await connection.execute(delete(table).where(table.c.seq == 6))

    broken = {r.head.chain: r.broken for r in await w.verified() if r.broken is not None}
    first, last = broken[shard_chain(0, 0)], broken[shard_chain(1, 0)]
    assert first is not None
    assert last is not None
    assert (first.seq, last.seq) == (4, 6)
    assert "missing" in first.what
    assert "missing" in last.what
    code, out = await _run(["audit", "verify"], w)
    assert code == 1, out
    assert f"{shard_chain(0, 0)}: BROKEN at #4: missing" in out
    assert f"{shard_chain(1, 0)}: BROKEN at #6: " in out


async def _forged(w: World, seq: int, subject: str) -> str:
    async with w.uow() as uow:
        [entry] = await uow.audit.entries(seq - 1, seq, 1)
    fields = (entry.chain, entry.seq, entry.at, entry.kind, subject, entry.actor, entry.details)
    return entry_hash(*fields, entry.prev)
