"""Join codes on SQLite, PostgreSQL and MariaDB: 10,000 generated codes are unique, a
collision is made again, 100 concurrent redemptions of one code bind it once, imports are
all or nothing and idempotent, the export lists every code, and 0017 undoes itself."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.randomness import SecretsRandomSource
from raffle.adapters.rate_limits import MemoryRateLimiter
from raffle.adapters.sql.migrate import downgrade, upgrade
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.activity import Activity
from raffle.domain.draws import UnknownActivity
from raffle.domain.join_codes import (
    ALPHABET,
    LENGTH,
    InvalidJoinCodes,
    JoinCode,
    JoinCodeInvalid,
    JoinCodeUsed,
)
from raffle.domain.users import RateLimited
from raffle.service import join_codes
from raffle.service.join_code_gate import JoinCodeGate
from raffle.service.join_codes import Batch, Redeemed
from raffle.service.ports import UnitOfWork
from tests.unit.fakes import FakeClock

ACTIVITY = 7001
BATCH = Batch(ACTIVITY, "poster", "store front")
IN_FLIGHT = 100


class Sequence:
    """A source answering the numbers given, in order."""

    def __init__(self, numbers: list[int]) -> None:
        self.numbers = numbers

    def below(self, n: int) -> int:
        return self.numbers.pop(0)


def code_of(symbol: int) -> list[int]:
    return [symbol] * LENGTH


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade(database_url)
    engine = create_engine(database_url, pool_size=IN_FLIGHT, max_overflow=10)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    async with SqlUnitOfWork(engine) as uow:
        await uow.activities.save(
            Activity(ACTIVITY, "codes", 1, start, datetime(2027, 1, 1, tzinfo=UTC))
        )
        await uow.commit()
    yield engine
    await engine.dispose()


def uow_of(engine: AsyncEngine) -> Callable[[], UnitOfWork]:
    return lambda: SqlUnitOfWork(engine)


async def every_code(engine: AsyncEngine, source: str | None = None) -> list[JoinCode]:
    return [c async for c in await join_codes.exported(ACTIVITY, uow_of(engine), source)]


async def redeem(engine: AsyncEngine, code: str, user: str, ip: str = "10.0.0.1") -> object:
    return await join_codes.redeem(
        ACTIVITY, code, user, ip=ip, uow=SqlUnitOfWork(engine), clock=FakeClock(),
        limiter=MemoryRateLimiter(FakeClock()), gate=JoinCodeGate(uow_of(engine)),
    )  # fmt: skip


async def test_ten_thousand_generated_codes_are_unique_and_exported(engine: AsyncEngine) -> None:
    made = await join_codes.generate_codes(
        BATCH, 10_000, uow=SqlUnitOfWork(engine), rng=SecretsRandomSource(), clock=FakeClock()
    )

    assert made == 10_000
    counts = await join_codes.counts(ACTIVITY, SqlUnitOfWork(engine))
    assert (counts.total, counts.used, counts.unused) == (10_000, 0, 10_000)
    codes = await every_code(engine)
    assert len({c.code for c in codes}) == 10_000
    assert all(len(c.code) == LENGTH and set(c.code) <= set(ALPHABET) for c in codes)
    assert {(c.source, c.remark, c.user_id) for c in codes} == {("poster", "store front", None)}


async def test_a_code_that_collides_with_a_stored_one_is_made_again(engine: AsyncEngine) -> None:
    await join_codes.generate_codes(
        BATCH, 1, uow=SqlUnitOfWork(engine), rng=Sequence(code_of(0)), clock=FakeClock()
    )
    # The next source gives the stored code first: it is skipped, and one more is drawn.
    made = await join_codes.generate_codes(
        Batch(ACTIVITY, "second"), 1, uow=SqlUnitOfWork(engine),
        rng=Sequence(code_of(0) + code_of(1)), clock=FakeClock(),
    )  # fmt: skip

    assert made == 1
    assert [(c.code, c.source) for c in await every_code(engine)] == [
        ("0" * LENGTH, "poster"),
        ("1" * LENGTH, "second"),
    ]


async def test_a_hundred_concurrent_redemptions_of_one_code_bind_it_once(
    engine: AsyncEngine,
) -> None:
    await join_codes.import_codes(
        BATCH, ["SHARED-CODE-1"], uow=SqlUnitOfWork(engine), clock=FakeClock()
    )
    users = [f"user-{n:03d}" for n in range(IN_FLIGHT)]

    results = await asyncio.gather(
        *(redeem(engine, "shared-code-1", u, f"10.0.{n}.1") for n, u in enumerate(users)),
        return_exceptions=True,
    )

    outcome = Counter(
        "bound" if isinstance(r, Redeemed) else getattr(r, "code", r) for r in results
    )
    assert outcome == {"bound": 1, "join_code_used": IN_FLIGHT - 1}, results
    winner = next(u for u, r in zip(users, results, strict=True) if not isinstance(r, Exception))
    (stored,) = await every_code(engine)
    assert stored.user_id == winner
    assert (await join_codes.counts(ACTIVITY, SqlUnitOfWork(engine))).used == 1


async def test_redeeming_binds_once_answers_retries_and_refuses_others(engine: AsyncEngine) -> None:
    await join_codes.import_codes(
        BATCH, ["AAAA-1111", "BBBB-2222"], uow=SqlUnitOfWork(engine), clock=FakeClock()
    )
    first = await redeem(engine, "aaaa1111", "alice")
    again = await redeem(engine, "AAAA-1111", "alice")
    other = await redeem(engine, "BBBB-2222", "alice")  # she holds one: the other stays free

    assert (first.code.code, first.redeemed) == ("AAAA1111", True)  # type: ignore[attr-defined]
    assert (again.code.code, again.redeemed) == ("AAAA1111", False)  # type: ignore[attr-defined]
    assert (other.code.code, other.redeemed) == ("AAAA1111", False)  # type: ignore[attr-defined]
    with pytest.raises(JoinCodeUsed):
        await redeem(engine, "AAAA-1111", "bob")
    with pytest.raises(JoinCodeInvalid):
        await redeem(engine, "CCCC-3333", "bob")
    with pytest.raises(JoinCodeInvalid):
        await redeem(engine, "not a code!", "bob")
    assert (await redeem(engine, "BBBB2222", "bob")).redeemed  # type: ignore[attr-defined]
    codes = {c.code: c.user_id for c in await every_code(engine)}
    assert codes == {"AAAA1111": "alice", "BBBB2222": "bob"}


async def test_wrong_codes_past_the_limit_are_refused_before_any_lookup(
    engine: AsyncEngine,
) -> None:
    limiter, clock = MemoryRateLimiter(FakeClock()), FakeClock()
    await join_codes.import_codes(BATCH, ["GOOD-CODE"], uow=SqlUnitOfWork(engine), clock=clock)

    async def attempt(code: str) -> object:
        return await join_codes.redeem(
            ACTIVITY, code, "mallory", ip="10.9.9.9", uow=SqlUnitOfWork(engine), limiter=limiter,
            clock=clock, gate=JoinCodeGate(uow_of(engine)),
        )  # fmt: skip

    for n in range(join_codes.FAILURES):
        with pytest.raises(JoinCodeInvalid):
            await attempt(f"GUESS{n:04d}")
    with pytest.raises(RateLimited):
        await attempt("GOOD-CODE")  # even the right one: guessing is over for the window
    assert [c.user_id for c in await every_code(engine)] == [None]


async def test_an_import_is_all_or_nothing_and_again_adds_nothing(engine: AsyncEngine) -> None:
    with pytest.raises(InvalidJoinCodes) as refused:
        await join_codes.import_codes(
            BATCH, ["GOOD-0001", "bad!", "U2", "GOOD-0002"], uow=SqlUnitOfWork(engine),
            clock=FakeClock(),
        )  # fmt: skip
    assert [i for i, _ in refused.value.problems] == [1, 2]
    assert await every_code(engine) == []

    first = await join_codes.import_codes(
        BATCH, ["good-0001", "GOOD-0001", "GOOD-0002"], uow=SqlUnitOfWork(engine), clock=FakeClock()
    )
    again = await join_codes.import_codes(
        Batch(ACTIVITY, "other"), ["GOOD-0002", "GOOD-0003"], uow=SqlUnitOfWork(engine),
        clock=FakeClock(),
    )  # fmt: skip
    assert (first.added, first.existing) == (2, 0)
    assert (again.added, again.existing) == (1, 1)
    assert [c.code for c in await every_code(engine, "poster")] == ["G00D0001", "G00D0002"]
    assert [c.code for c in await every_code(engine, "other")] == ["G00D0003"]


async def test_codes_of_an_unknown_activity_are_refused(engine: AsyncEngine) -> None:
    with pytest.raises(UnknownActivity):
        await join_codes.generate_codes(
            Batch(424242, "x"), 1, uow=SqlUnitOfWork(engine), rng=SecretsRandomSource(),
            clock=FakeClock(),
        )  # fmt: skip
    with pytest.raises(UnknownActivity):
        await join_codes.exported(424242, uow_of(engine))


async def test_0017_undoes_itself(database_url: str) -> None:
    await upgrade(database_url)
    await downgrade(database_url, "0015")
    await upgrade(database_url)
