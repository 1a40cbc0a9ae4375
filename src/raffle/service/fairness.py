"""Commit–reveal seeds: each activity's seed per period made ahead, cached for the draws,
revealed when the period ends; and the players' client seeds."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from raffle.domain.activity import Activity, ActivityState
from raffle.domain.engine import DrawEngine
from raffle.domain.fairness import (
    SEED_BYTES,
    SeedInForce,
    ServerSeed,
    check_client_seed,
    default_client_seed,
    odds_hash,
    period_end,
)
from raffle.service.ports import UnitOfWork

# A rotation ends the period this long after it is asked for: every process re-reads its
# seeds within its cache's time to live (shorter), so none draws on a seed once revealed.
ROTATION_GRACE = timedelta(seconds=2)
REVEALED_SHOWN = 30  # past seeds the fairness page lists
CLIENT_OVERLAP = timedelta(minutes=1)


class SeedBook:
    """The seeds in force and the players' own client seeds, held per process: a draw finds
    both in memory. Seeds are re-read after `ttl` seconds, and at once when the cached ones no
    longer cover the draw's time; client seeds set since the last look are read every `ttl`
    seconds, all of them in one query. One read at a time: the draws in flight wait for it
    rather than each making its own."""

    def __init__(self, uow: Callable[[], UnitOfWork], ttl: float = 1.0) -> None:
        self._uow = uow
        self._ttl = ttl
        self._seeds: dict[int, tuple[float, Sequence[ServerSeed]]] = {}
        self._reading = asyncio.Lock()
        self._clients: dict[str, str] = {}  # the players who set their own
        self._clients_until = 0.0  # monotonic time of the next look for new ones
        self._clients_since: datetime | None = None  # the latest change seen
        self._clients_reading = asyncio.Lock()
        self._odds: dict[int, tuple[DrawEngine, str]] = {}
        self._revealed: dict[str | tuple[int, int], ServerSeed] = {}

    async def in_force(
        self, activity: Activity, engine: DrawEngine, user_id: str, now: datetime
    ) -> SeedInForce:
        seed = await self.current(activity, now)
        return SeedInForce(seed, await self.client_seed(user_id), self.odds_hash(engine))

    async def current(self, activity: Activity, now: datetime) -> ServerSeed:
        if (seed := self._cached(activity.id, now)) is not None:
            return seed
        async with self._reading:
            if (seed := self._cached(activity.id, now)) is not None:
                return seed
            upcoming = await self.upcoming(activity, now)
        return next(s for s in upcoming if s.covers(now))

    def _cached(self, activity_id: int, now: datetime) -> ServerSeed | None:
        cached = self._seeds.get(activity_id)
        if cached is None or cached[0] <= time.monotonic():
            return None
        for seed in cached[1]:
            if seed.covers(now):
                return seed
        return None

    async def upcoming(self, activity: Activity, now: datetime) -> Sequence[ServerSeed]:
        """The seed in force at `now` and the next one, both made (and so committed) if
        they were not yet."""
        async with self._uow() as uow:
            read = await ahead(uow, activity, now)
            await uow.commit()
        # A seed read again unchanged stays the one held, with the seals made under it.
        held = {s: s for s in self._seeds.get(activity.id, (0.0, ()))[1]}
        upcoming = [held.get(s, s) for s in read]
        self._seeds[activity.id] = (time.monotonic() + self._ttl, upcoming)
        return upcoming

    async def client_seed(self, user_id: str) -> str:
        if self._clients_until <= time.monotonic():
            await self._read_clients()
        return self._clients.get(user_id) or default_client_seed(user_id)

    async def _read_clients(self) -> None:
        async with self._clients_reading:
            if self._clients_until > time.monotonic():
                return
            # Read again what changed shortly before the latest change seen: a transaction
            # that committed late with an earlier time is not missed.
            since = None if self._clients_since is None else self._clients_since - CLIENT_OVERLAP
            async with self._uow() as uow:
                changed = await uow.seeds.client_seeds(since)
            for user_id, seed, at in changed:
                self._clients[user_id] = seed
                if self._clients_since is None or at > self._clients_since:
                    self._clients_since = at
            self._clients_until = time.monotonic() + self._ttl

    async def set_client_seed(self, user_id: str, seed: str, now: datetime) -> str:
        check_client_seed(seed)
        async with self._uow() as uow:
            await uow.seeds.set_client_seed(user_id, seed, now)
            await uow.commit()
        self._clients[user_id] = seed
        return seed

    def odds_hash(self, engine: DrawEngine) -> str:
        """The hash of the odds the engine draws at, computed once per engine."""
        key = id(engine)
        cached = self._odds.get(key)
        if cached is None or cached[0] is not engine:
            found = odds_hash(engine.strategy, engine.awards, engine.perfect)
            cached = (engine, found)
            self._odds[key] = cached
        return cached[1]

    async def rotate(self, activity: Activity, now: datetime) -> Sequence[ServerSeed]:
        """End the period in force (its seed revealed once the grace is over) and start
        the next; the one after is made and committed at once."""
        at = now + ROTATION_GRACE
        async with self._uow() as uow:
            current = next(s for s in await ahead(uow, activity, now) if s.covers(now))
            nxt = period_end(at, activity.time_zone, activity.end_at)
            await uow.seeds.end(activity.id, current.period, at, nxt)
            upcoming = await ahead(uow, activity, at)
            await uow.commit()
        self._seeds.pop(activity.id, None)
        return upcoming

    async def of_receipt(
        self, commitment: str, activity_id: int, period: int, config: Callable[[], UnitOfWork]
    ) -> ServerSeed | None:
        """The seed a receipt names: by its commitment, else (a commitment changed) by its
        activity and period. Revealed ones are kept: they never change again."""
        if (known := self._revealed.get(commitment)) is not None:
            return known
        if (known := self._revealed.get((activity_id, period))) is not None:
            return known
        async with config() as uow:
            seed = await uow.seeds.by_commitment(commitment)
            if seed is None:
                seed = await uow.seeds.get(activity_id, period)
        return seed

    def keep_revealed(self, seed: ServerSeed) -> None:
        if len(self._revealed) > 10_000:  # a bound on memory
            self._revealed.clear()
        self._revealed[seed.commitment] = seed
        self._revealed[seed.activity_id, seed.period] = seed

    async def closed(self, activity: Activity, now: datetime) -> None:
        """A closed activity's period ends with it: the first look after an operator closed
        it early rotates the seed (revealed after the grace, as any rotation)."""
        if activity.state is not ActivityState.CLOSED:
            return
        async with self._uow() as uow:
            upcoming = await uow.seeds.upcoming(activity.id, now)
        current = next((s for s in upcoming if s.covers(now)), None)
        if current is not None and current.ends_at > now + ROTATION_GRACE:
            await self.rotate(activity, now)

    def forget(self) -> None:
        self._seeds.clear()


async def ahead(uow: UnitOfWork, activity: Activity, now: datetime) -> Sequence[ServerSeed]:
    """The activity's seeds not ended at `now`: the one in force and the next, made from
    the CSPRNG if missing. Two processes making one period at once: the first stored wins,
    and both read it back."""
    for _ in range(3):  # at most the period in force, then the next, then read back
        upcoming = list(await uow.seeds.upcoming(activity.id, now))
        current = next((s for s in upcoming if s.covers(now)), None)
        if current is None:
            last = await uow.seeds.last(activity.id)
            period = last.period + 1 if last is not None else 1
            end = period_end(now, activity.time_zone, activity.end_at)
            await uow.seeds.add(_made(activity, period, now, end))
        elif not any(s.period == current.period + 1 for s in upcoming):
            end = period_end(current.ends_at, activity.time_zone, activity.end_at)
            await uow.seeds.add(_made(activity, current.period + 1, current.ends_at, end))
        else:
            return upcoming
    raise RuntimeError(f"the seeds of activity {activity.id} do not cover {now.isoformat()}")


def _made(activity: Activity, period: int, starts_at: datetime, ends_at: datetime) -> ServerSeed:
    return ServerSeed(activity.id, period, secrets.token_bytes(SEED_BYTES), starts_at, ends_at)


@dataclass(frozen=True, slots=True)
class Fairness:
    """What anyone may read of an activity's seeds: the commitments of the period in force
    and the next, and the seeds of the periods that are over."""

    current: ServerSeed
    next: ServerSeed
    revealed: Sequence[ServerSeed]


async def fairness(
    activity: Activity, *, seeds: SeedBook, uow: UnitOfWork, now: datetime
) -> Fairness:
    await seeds.closed(activity, now)
    upcoming = await seeds.upcoming(activity, now)
    async with uow:
        revealed = await uow.seeds.revealed(activity.id, now, REVEALED_SHOWN)
    current = next(s for s in upcoming if s.covers(now))
    following = next(s for s in upcoming if s.period == current.period + 1)
    return Fairness(current, following, revealed)
