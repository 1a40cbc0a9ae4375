"""Scheduled draws: entries until the cutoff, the list frozen and hashed, winners picked at the
draw time and recorded on their shards for delivery, and what each entrant sees."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from raffle.domain.activity import Activity, ActivityState
from raffle.domain.draws import ActivityNotOpen, OrderState, RaffleOrder, Win
from raffle.domain.fairness import SEED_BYTES
from raffle.domain.policies import NotAdmitted, local_day
from raffle.domain.profiles import Profile
from raffle.domain.scheduled import (
    DrawStage,
    EntrantHash,
    EntryClosed,
    NotEntered,
    NotFrozen,
    NotScheduled,
    Pick,
    Schedule,
    ScheduledDraw,
    Terms,
    picking,
    stage,
    verified,
)
from raffle.service import ids
from raffle.service.catalogue import Catalogue
from raffle.service.delivery import won_message
from raffle.service.draw_checks import DrawChecks
from raffle.service.participation import enter
from raffle.service.ports import Clock, Shards, UnitOfWork
from raffle.service.ports.audiences import Audience, Profiles

PAGE = 10_000  # entrant ids read at a time: the job's memory does not grow with the list
RECORDED_AT_ONCE = 500  # winners written to their shards a batch at a time
RULE = "scheduled"  # the rule a scheduled draw's wins carry


@dataclass(frozen=True, slots=True)
class Entrance:
    """What an entrant sees: when they entered, where the draw stands, and what they won
    (the award ids, once drawn)."""

    activity_id: int
    entered_at: datetime
    stage: DrawStage
    draw_at: datetime
    cutoff: datetime
    won: tuple[int, ...]


def schedule_of(activity: Activity) -> Schedule:
    if activity.schedule is None:
        raise NotScheduled(f"activity {activity.id} draws at once: draw instead of entering")
    return activity.schedule


async def enter_draw(
    user_id: str,
    activity_id: int,
    *,
    catalogue: Catalogue,
    uow: Callable[[], UnitOfWork],
    clock: Clock,
    checks: DrawChecks | None = None,
    profiles: Profiles | None = None,
    audience: Audience | None = None,
    ip: str | None = None,
) -> Entrance:
    """Enter a scheduled activity (again: the same entrance). The checks that guard a draw
    guard an entry, in the same order; of the participation policies, who they admit
    (audience, level): an entry costs nothing and is made once. After the cutoff, or once
    the list is closed, EntryClosed."""
    now = clock.now()
    if checks is not None:
        await checks.player(user_id, activity_id, ip)
    activity = await catalogue.activity(activity_id)
    schedule = schedule_of(activity)
    if not activity.is_open(now):
        raise ActivityNotOpen(f"activity {activity.id} is {activity.state}, not open")
    if not schedule.open(now):
        raise EntryClosed(f"entries closed at {schedule.cutoff.isoformat()}")
    if checks is not None:
        await checks.activity(activity, user_id)
    await _admitted(activity, user_id, now, catalogue, profiles, audience)
    async with uow() as u:
        draw = await u.scheduled.held_open(activity.id)
        if draw is None:
            await u.scheduled.add(_made(activity.id))
            draw = await u.scheduled.held_open(activity.id)
        if draw is None or draw.frozen_at is not None:
            raise EntryClosed(f"entries to activity {activity.id} are closed")
        entered_at = await u.scheduled.enter(activity.id, user_id, now)
        await u.commit()
    return Entrance(activity.id, entered_at, DrawStage.OPEN, schedule.draw_at, schedule.cutoff, ())


async def _admitted(
    activity: Activity,
    user_id: str,
    now: datetime,
    catalogue: Catalogue,
    profiles: Profiles | None,
    audience: Audience | None,
) -> None:
    participation = await catalogue.participation(activity.id)
    entry = await enter(participation, user_id, activity, now, profiles, audience)
    if entry is None or not entry.early or any(reason is None for reason in entry.early):
        return  # no policies (caps alone admit everyone), or one that admits the user
    policies = entry.participation.policies
    raise NotAdmitted({p.policy_id: str(r) for p, r in zip(policies, entry.early, strict=True)})


async def entrance(
    user_id: str, activity_id: int, *, catalogue: Catalogue, uow: Callable[[], UnitOfWork]
) -> Entrance:
    """The user's entrance and, once drawn, what they won; NotEntered if they did not."""
    activity = await catalogue.activity(activity_id)
    schedule = schedule_of(activity)
    async with uow() as u:
        entered_at = await u.scheduled.entered(activity.id, user_id)
        if entered_at is None:
            raise NotEntered(f"you have not entered activity {activity.id}")
        draw = await u.scheduled.get(activity.id)
        won = await u.scheduled.won(activity.id, user_id) if stage(draw) is DrawStage.DRAWN else []
    return Entrance(
        activity.id, entered_at, stage(draw), schedule.draw_at, schedule.cutoff,
        tuple(p.award_id for p, _ in won),
    )  # fmt: skip


async def published(activity: Activity, *, uow: Callable[[], UnitOfWork]) -> ScheduledDraw:
    """The activity's draw, its seed made (and so its commitment published) if missing."""
    schedule_of(activity)
    async with uow() as u:
        draw = await u.scheduled.get(activity.id)
        if draw is None:
            await u.scheduled.add(_made(activity.id))
            draw = await u.scheduled.get(activity.id)
        await u.commit()
    assert draw is not None  # added, or by another process first
    return draw


@dataclass(frozen=True, slots=True)
class PublicRecord:
    """What anyone may read of a scheduled draw (the seed only once drawn)."""

    schedule: Schedule
    draw: ScheduledDraw
    terms: Terms | None  # once the list is frozen


async def public_record(
    activity: Activity, *, uow: Callable[[], UnitOfWork], catalogue: Catalogue
) -> PublicRecord:
    draw = await published(activity, uow=uow)
    terms = None if draw.entrants_hash is None else await draw_terms(activity, draw, catalogue)
    return PublicRecord(schedule_of(activity), draw, terms)


async def entrant_pages(
    activity: Activity, *, uow: Callable[[], UnitOfWork]
) -> AsyncIterator[list[str]]:
    """The frozen list a page at a time (NotFrozen before the cutoff's hash)."""
    draw = await published(activity, uow=uow)
    if draw.entrants_hash is None:
        raise NotFrozen(f"activity {activity.id}'s entrants are not frozen yet", stage(draw))
    return pages(uow, activity.id)


async def pages(uow: Callable[[], UnitOfWork], activity_id: int) -> AsyncIterator[list[str]]:
    """The entrant ids in order, PAGE at a time, each page read in a transaction of its own."""
    after = None
    while True:
        async with uow() as u:
            page = await u.scheduled.entrants(activity_id, after, PAGE)
        if page:
            yield page
        if len(page) < PAGE:
            return
        after = page[-1]


@dataclass(frozen=True, slots=True)
class DrawVerdict:
    drawn: bool  # False: not drawn yet, the seed still secret
    differs: tuple[str, ...]  # empty: the published winners match


async def verify_draw(
    activity: Activity, listed: bytes, *, uow: Callable[[], UnitOfWork], catalogue: Catalogue
) -> DrawVerdict:
    """The published winners computed again from the entrant list file `listed`, the
    revealed seed and the published terms (domain `verified`)."""
    record = await public_record(activity, uow=uow, catalogue=catalogue)
    seed = record.draw.seed
    if seed is None or record.terms is None:
        return DrawVerdict(False, ())
    async with uow() as u:
        published_picks = [pick for pick, _, _ in await u.scheduled.winners(activity.id)]
    said = verified(
        record.terms, seed, record.draw.commitment, listed, record.draw.skipped, published_picks
    )
    return DrawVerdict(True, tuple(said))


def _made(activity_id: int) -> ScheduledDraw:
    return ScheduledDraw(activity_id, secrets.token_bytes(SEED_BYTES))


async def draw_terms(activity: Activity, draw: ScheduledDraw, catalogue: Catalogue) -> Terms:
    """The published terms of the draw: each enabled prize of the strategy in its order,
    with `winners` each (fewer where its stock is smaller), the per-person limit, the list."""
    schedule = schedule_of(activity)
    engine = await catalogue.engine(activity)
    chosen = tuple(
        (p.award_id, schedule.winners if p.stock is None else min(p.stock, schedule.winners))
        for p in engine.strategy.prizes
        if p.enabled
    )
    return draw.terms(chosen, schedule.per_person)


@dataclass(frozen=True, slots=True)
class Scheduler:
    """The scheduler job's steps for scheduled activities, each one done once whichever
    process gets to it first (compare-and-set), and started again where it stopped."""

    uow: Callable[[], UnitOfWork]
    catalogue: Catalogue
    shards: Shards
    clock: Clock
    profiles: Profiles | None = None
    audience: Audience | None = None
    # Activities this process saw drawn and recorded to the last winner: nothing is left to
    # do for them, so the ticks after do not look again (a schedule never changes once run).
    finished: set[int] = field(default_factory=set)

    async def run(self) -> list[tuple[int, str]]:
        """One look at every scheduled activity: the steps done, by activity."""
        async with self.uow() as u:
            activities = [a for a in await u.activities.all() if a.schedule is not None]
        done: list[tuple[int, str]] = []
        for activity in activities:
            if activity.id in self.finished:
                continue
            if activity.state in (ActivityState.RUNNING, ActivityState.CLOSED):
                done += [(activity.id, step) for step in await self.advance(activity)]
        return done

    async def advance(self, activity: Activity) -> list[str]:
        schedule = schedule_of(activity)
        now = self.clock.now()
        draw = await published(activity, uow=self.uow)
        steps: list[str] = []
        if now < schedule.cutoff:
            return steps
        if draw.entrants_hash is None:
            await self.freeze(activity, now)
            steps.append("frozen")
        if now < schedule.draw_at:
            return steps
        async with self.uow() as u:
            again = await u.scheduled.get(activity.id)
        assert again is not None  # made above
        if again.drawn_at is None:
            await self.pick(activity, again, now)
            steps.append("drawn")
        if await self.record(activity, now):
            steps.append("recorded")
        self.finished.add(activity.id)
        return steps

    async def freeze(self, activity: Activity, now: datetime) -> None:
        """Take no more entries (waiting for those in flight), then hash the list a page at
        a time and publish its size and hash."""
        async with self.uow() as u:
            await u.scheduled.close(activity.id, now)
            await u.commit()
        found = EntrantHash()
        async for page in pages(self.uow, activity.id):
            found.add(page)
        async with self.uow() as u:
            await u.scheduled.freeze(activity.id, found.count, found.hexdigest())
            await u.commit()

    async def pick(self, activity: Activity, draw: ScheduledDraw, now: datetime) -> None:
        """The winners, the entrants asked for by position a batch at a time; those outside
        the draw's audience now are skipped and listed."""
        terms = await draw_terms(activity, draw, self.catalogue)
        schedule = schedule_of(activity)
        skipped: list[str] = []
        steps = picking(terms, draw.secret)
        bounds: dict[int, str | None] = {0: None}
        try:
            asked = next(steps)
            while True:
                found = await self._entrants_at(activity.id, asked, bounds)
                answers = []
                for user_id in found:
                    may = await self._may_win(schedule, activity, user_id, now)
                    if not may:
                        skipped.append(user_id)
                    answers.append((user_id, may))
                asked = steps.send(answers)
        except StopIteration as done:
            picks: list[Pick] = done.value
        with_orders = [(p, ids.order_id(now)) for p in picks]
        async with self.uow() as u:
            await u.scheduled.drawn(activity.id, with_orders, sorted(set(skipped)), now)
            await u.commit()

    async def _entrants_at(
        self, activity_id: int, positions: Sequence[int], bounds: dict[int, str | None]
    ) -> list[str]:
        """The entrants at these positions: each the one so many places into its page of
        PAGE, counted by the database from the page's first id (`bounds`: the id before
        each page, found as needed and kept for the draw), so no page is read whole."""
        found = []
        async with self.uow() as u:
            for position in positions:
                page, offset = divmod(position, PAGE)
                for k in range(max(bounds) + 1, page + 1):
                    bounds[k] = await u.scheduled.entrant_at(activity_id, bounds[k - 1], PAGE - 1)
                user_id = await u.scheduled.entrant_at(activity_id, bounds[page], offset)
                if user_id is None:
                    raise RuntimeError(f"activity {activity_id} has no entrant at {position}")
                found.append(user_id)
        return found

    async def _may_win(
        self, schedule: Schedule, activity: Activity, user_id: str, now: datetime
    ) -> bool:
        if schedule.audience is None:
            return True
        if self.audience is None:
            return False
        profile = Profile(user_id) if self.profiles is None else await self.profiles.of(user_id)
        day = local_day(activity.time_zone, now)
        return await self.audience.holds(schedule.audience, profile, day)

    async def record(self, activity: Activity, now: datetime) -> int:
        """The winners' wins and outbox messages in their shards, a batch at a time; a win
        already there (a run stopped half-way) is not written twice. How many were written."""
        written = 0
        while True:
            async with self.uow() as u:
                batch = await u.scheduled.unrecorded(activity.id, RECORDED_AT_ONCE)
            if not batch:
                return written
            by_shard: dict[int, list[tuple[Pick, str]]] = {}
            for pick, order_id in batch:
                by_shard.setdefault(self.shards.index(pick.user_id), []).append((pick, order_id))
            for group in by_shard.values():
                written += await self._record(activity, group, now)
            async with self.uow() as u:
                await u.scheduled.recorded(activity.id, [order_id for _, order_id in batch])
                await u.commit()

    async def _record(
        self, activity: Activity, group: Sequence[tuple[Pick, str]], now: datetime
    ) -> int:
        async with self.shards.for_user(group[0][0].user_id) as shard:
            there = await shard.wins.present([order_id for _, order_id in group])
            fresh = [(p, o) for p, o in group if o not in there]
            for pick, order_id in fresh:
                order = RaffleOrder(
                    order_id, pick.user_id, activity.id, activity.strategy_id, 1,
                    OrderState.USED, now,
                )  # fmt: skip
                win = Win(
                    order_id, pick.user_id, activity.id, activity.strategy_id, pick.award_id,
                    None, RULE, now,
                )  # fmt: skip
                await shard.orders.add(order)
                await shard.wins.add(win)
                await shard.outbox.add(won_message(win, now))
            await shard.commit()
        return len(fresh)
