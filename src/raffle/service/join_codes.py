"""Join codes: generated or imported by operators, redeemed once by a player, counted, exported."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime

from raffle.domain.join_codes import (
    MAX_PER_REQUEST,
    REMARK_MAX,
    SOURCE_MAX,
    InvalidJoinCodes,
    JoinCode,
    JoinCodeCounts,
    JoinCodeInvalid,
    JoinCodeUsed,
    check_label,
    generate,
    normalise,
)
from raffle.domain.randomness import RandomSource
from raffle.domain.users import InvalidInput, RateLimited
from raffle.service.activities import stored
from raffle.service.join_code_gate import JoinCodeGate
from raffle.service.ports import Clock, RateLimiter, UnitOfWork
from raffle.service.ports.join_codes import Redemption

# Wrong or used codes a user, or an address, may offer per window before being refused:
# with imported codes as short as 4 symbols (20 bits), this keeps guessing one hopeless.
FAILURES = 10
FAILURE_WINDOW = 3600
ROUNDS = 8  # of generation: a round repeats only for codes that collided, at 2^-60 each
EXPORT_PAGE = 1000


@dataclass(frozen=True, slots=True)
class Batch:
    activity_id: int
    source: str
    remark: str = ""


@dataclass(frozen=True, slots=True)
class Imported:
    added: int  # new codes stored
    existing: int  # already stored in the activity: left as they were


@dataclass(frozen=True, slots=True)
class Redeemed:
    code: JoinCode
    redeemed: bool  # False: the user held this (or another) code of the activity already


async def generate_codes(
    batch: Batch, count: int, *, uow: UnitOfWork, rng: RandomSource, clock: Clock
) -> int:
    """`count` new codes from `rng` (the CSPRNG), stored in one transaction; a code that
    collides with a stored one is skipped by the unique key and made again."""
    _check(batch, count)
    now = clock.now()
    async with uow:
        await stored(batch.activity_id, uow)
        made = 0
        for _ in range(ROUNDS):
            if made == count:
                break
            fresh = {generate(rng) for _ in range(count - made)}
            made += await uow.join_codes.add([_new(batch, code, now) for code in fresh])
        if made < count:
            raise RuntimeError("join codes kept colliding: is the random source random?")
        await uow.commit()
    return made


async def import_codes(
    batch: Batch, typed: list[str], *, uow: UnitOfWork, clock: Clock
) -> Imported:
    """Store codes made elsewhere, all or nothing: one that is not a code refuses them all
    (InvalidJoinCodes, each by position). Codes stored before are left as they were, so
    importing a file again adds nothing."""
    _check(batch, len(typed))
    codes = [normalise(t) for t in typed]
    problems = [(i, "not a code: 4-32 of 0-9 A-Z without U") for i, c in enumerate(codes) if not c]
    if problems:
        raise InvalidJoinCodes(problems[:100])
    unique = list(dict.fromkeys(c for c in codes if c))
    now = clock.now()
    async with uow:
        await stored(batch.activity_id, uow)
        added = await uow.join_codes.add([_new(batch, code, now) for code in unique])
        await uow.commit()
    return Imported(added, len(unique) - added)


async def redeem(
    activity_id: int,
    typed: str,
    user_id: str,
    *,
    ip: str,
    uow: UnitOfWork,
    limiter: RateLimiter,
    clock: Clock,
    gate: JoinCodeGate,
) -> Redeemed:
    """Bind the code to the user. Wrong and used codes count against the user and the
    address; past `FAILURES` in `FAILURE_WINDOW` they are refused before any lookup."""
    keys = (f"join-code-fail:{user_id}", f"join-code-fail-ip:{ip}")
    for key in keys:
        if await limiter.count(key, FAILURE_WINDOW) >= FAILURES:
            raise RateLimited("too many wrong join codes", max(await _wait(limiter, key), 1))
    try:
        found = await _redeem(activity_id, typed, user_id, uow, clock)
    except (JoinCodeInvalid, JoinCodeUsed):
        for key in keys:
            await limiter.hit(key, FAILURES, FAILURE_WINDOW)
        raise
    gate.remember(activity_id, user_id)
    return found


async def _redeem(
    activity_id: int, typed: str, user_id: str, uow: UnitOfWork, clock: Clock
) -> Redeemed:
    code = normalise(typed)
    async with uow:
        await stored(activity_id, uow)
        if code is None:
            raise JoinCodeInvalid("no such join code in this activity")
        outcome = await uow.join_codes.redeem(activity_id, code, user_id, clock.now())
        if outcome is Redemption.BOUND:
            found = await uow.join_codes.get(activity_id, code)
            await uow.commit()
            assert found is not None  # just bound, in this transaction
            return Redeemed(found, redeemed=True)
        if outcome is Redemption.HELD:
            held = await uow.join_codes.held(activity_id, user_id)
            assert held is not None  # what broke the unique index
            return Redeemed(held, redeemed=False)
        found = await uow.join_codes.get(activity_id, code)
    if found is None:
        raise JoinCodeInvalid("no such join code in this activity")
    if found.user_id != user_id:
        raise JoinCodeUsed("this join code was used already")
    return Redeemed(found, redeemed=False)  # theirs already: a retry


async def held(activity_id: int, user_id: str, uow: UnitOfWork) -> JoinCode | None:
    """The code the user holds in the activity, if any."""
    async with uow:
        await stored(activity_id, uow)
        return await uow.join_codes.held(activity_id, user_id)


async def counts(activity_id: int, uow: UnitOfWork) -> JoinCodeCounts:
    async with uow:
        await stored(activity_id, uow)
        return await uow.join_codes.counts(activity_id)


async def exported(
    activity_id: int, uow: Callable[[], UnitOfWork], source: str | None = None
) -> AsyncIterator[JoinCode]:
    """Every code of the activity (from `source`, if given) in code order, read a page per
    transaction as the iterator is consumed; UnknownActivity at once."""
    async with uow() as reader:
        await stored(activity_id, reader)
    return _pages(activity_id, uow, source)


async def _pages(
    activity_id: int, uow: Callable[[], UnitOfWork], source: str | None
) -> AsyncIterator[JoinCode]:
    after: str | None = None
    while True:
        async with uow() as reader:
            page = await reader.join_codes.page(
                activity_id, after=after, limit=EXPORT_PAGE, source=source
            )
        for code in page:
            yield code
        if len(page) < EXPORT_PAGE:
            return
        after = page[-1].code


def _check(batch: Batch, count: int) -> None:
    if not 1 <= count <= MAX_PER_REQUEST:
        raise InvalidInput(f"from 1 to {MAX_PER_REQUEST} codes at once")
    for problem in (
        check_label("source", batch.source, SOURCE_MAX),
        check_label("remark", batch.remark, REMARK_MAX),
    ):
        if problem:
            raise InvalidInput(problem)
    if not batch.source.strip():
        raise InvalidInput("source is required: say where the codes come from")


async def _wait(limiter: RateLimiter, key: str) -> int:
    return await limiter.hit(key, FAILURES, FAILURE_WINDOW)


def _new(batch: Batch, code: str, now: datetime) -> JoinCode:
    return JoinCode(batch.activity_id, code, batch.source, batch.remark, now)
