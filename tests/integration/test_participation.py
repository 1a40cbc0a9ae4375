"""Participation policies and per-person caps in the draw, on every backend (SQLite alone;
PostgreSQL and MariaDB 2 x 4 with Redis): counted in the draw's transaction, they hold under
hundreds of concurrent draws; a refusal changes nothing."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from raffle.adapters.sql.mariadb.draw_batch import MariaDrawBatch
from raffle.adapters.sql.postgres.draw_batch import PgDrawBatch
from raffle.adapters.sql.repositories.participation import SqlCounterRepository
from raffle.adapters.sql.sqlite.draw import SqliteDrawBatch
from raffle.bootstrap import Raffle
from raffle.domain.caps import Caps
from raffle.domain.points import PointsKind, PointsOrder
from raffle.domain.policies import (
    INSUFFICIENT_POINTS,
    JOIN_LIMIT_REACHED,
    LEVEL_REQUIRED,
    NOT_IN_AUDIENCE,
    WIN_LIMIT_REACHED,
    Limit,
    NotAdmitted,
    Participation,
    Period,
    PersonCaps,
    Policy,
)
from raffle.domain.quota import NoChances, QuotaPack
from raffle.domain.tags import Tag, TagKind
from raffle.service.activities import published_odds
from raffle.service.draw import Draw, DrawResult, draw
from raffle.service.tags import add_members, save_tag
from tests.integration.raffles import ACTIVITY, PRIZE, WELCOME, Build, SettableClock
from tests.integration.raffles import campaign as one_activity
from tests.integration.test_draw_concurrency import (
    IN_FLIGHT,
    another_process,
    assert_batched,
)

OTHER = 2  # a second activity on the same strategy
NOON = datetime(2026, 11, 24, 4, 0, tzinfo=UTC)  # Tuesday 12:00 in Shanghai
PLENTY = QuotaPack(WELCOME, 1000, 1000, 1000)

Answer = DrawResult | NotAdmitted | NoChances


def campaign(rate: str = "1", stock: int = 1000, now: datetime = NOON):  # type: ignore[no-untyped-def]
    base = one_activity(rate=rate, stock=stock, pack=PLENTY, now=now)
    other = replace(base.activities[0], id=OTHER, name="other")
    return replace(base, activities=(*base.activities, other))


async def answers(raffle: Raffle, draws: list[Draw]) -> list[Answer]:
    """Every draw at once, at most IN_FLIGHT at a time: its result, or its refusal."""
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(cmd: Draw) -> Answer:
        async with gate:
            try:
                return await draw(
                    cmd, catalogue=raffle.catalogue, shards=raffle.shards, stock=raffle.stock,
                    rng=raffle.rng, clock=raffle.clock, hints=raffle.hints,
                    profiles=raffle.profiles, audience=raffle.tags, caps=raffle.caps,
                )  # fmt: skip
            except (NotAdmitted, NoChances) as refused:
                return refused

    return await asyncio.gather(*(one(d) for d in draws))


def kinds(found: list[Answer]) -> Counter[str]:
    """The answers by kind: a prize, the fallback by its rule, or a refusal by reasons."""
    counted: Counter[str] = Counter()
    for a in found:
        if isinstance(a, NotAdmitted):
            counted[",".join(sorted(set(a.reasons.values())))] += 1
        elif isinstance(a, NoChances):
            counted["no_chances"] += 1
        else:
            counted["prize" if a.award_id == PRIZE else f"fallback:{a.rule}"] += 1
    return counted


async def configure(raffle: Raffle, *participations: Participation) -> None:
    async with raffle.uow() as uow:
        for participation in participations:
            await uow.participation.save(participation)
        await uow.commit()
    raffle.catalogue.forget()


async def chances_left(raffle: Raffle, user: str, activity: int = ACTIVITY) -> int:
    """The user's chances left in the activity; the welcome pack's if no account is open
    (a refused first visit may leave it unopened: the pack is still owed whole)."""
    async with raffle.shards.for_user(user) as uow:
        account = await uow.quotas.get(user, activity, "2000-01-01", "2000-01")
    return PLENTY.total if account is None else account.total_left


async def test_a_policys_win_a_day_admits_one_win_among_500_draws_of_one_user(
    build: Build,
) -> None:
    raffle = await build(campaign(), SettableClock(NOON))
    await configure(raffle, Participation(ACTIVITY, (Policy(1, 1, wins=Limit(1, Period.DAY)),)))
    draws = [Draw("lucky", ACTIVITY) for _ in range(500)]
    draws += [Draw(f"other{u:02d}", ACTIVITY) for u in range(40) for _ in range(2)]

    found = await answers(raffle, draws)

    # The policy refuses the joins after the win (the win_limit_reached): they
    # keep their chance. Each other user wins once and is refused once.
    assert kinds(found[:500]) == Counter({"prize": 1, WIN_LIMIT_REACHED: 499})
    assert kinds(found[500:]) == Counter({"prize": 40, WIN_LIMIT_REACHED: 40})
    assert await chances_left(raffle, "lucky") == 999
    assert_batched(raffle)


async def test_a_win_a_day_holds_for_one_user_drawing_in_two_processes_from_the_first_visit(
    build: Build,
) -> None:
    # Each process's batches read the counters with (MariaDB) or after (PostgreSQL) the
    # chances they take: the other process's batches commit between them, and the first
    # visits race to open the account, whose reads are made again once it is opened.
    raffle = await build(campaign(), SettableClock(NOON))
    await configure(raffle, Participation(ACTIVITY, (Policy(1, 1, wins=Limit(1, Period.DAY)),)))
    async with another_process(raffle) as other:
        other.clock = raffle.clock
        draws = [Draw("twice", ACTIVITY) for _ in range(100)]
        found = [a for both in await asyncio.gather(answers(raffle, draws), answers(other, draws))
                 for a in both]  # fmt: skip

    assert kinds(found) == Counter({"prize": 1, WIN_LIMIT_REACHED: 199})
    assert await chances_left(raffle, "twice") == 999


async def test_the_activitys_win_a_day_cap_turns_499_of_500_wins_into_the_fallback(
    build: Build,
) -> None:
    raffle = await build(campaign(), SettableClock(NOON))
    await configure(raffle, Participation(ACTIVITY, caps=PersonCaps(Limit(1, Period.DAY))))

    found = await answers(raffle, [Draw("lucky", ACTIVITY) for _ in range(500)])

    assert kinds(found) == Counter({"prize": 1, "fallback:person_cap": 499})
    assert await chances_left(raffle, "lucky") == 500
    assert await raffle.stock.left(10, PRIZE) == 999  # a capped win takes no stock
    odds = await published_odds(ACTIVITY, catalogue=raffle.catalogue, stock=raffle.stock)
    assert odds.person_caps == PersonCaps(Limit(1, Period.DAY))  # published: capped wins fall back


async def test_a_win_a_person_cap_stops_takes_no_winners_slot_of_the_activity(
    build: Build,
) -> None:
    # Five winners in all (the activity's cap, service/caps.py) and one win a day each (a
    # per-person cap): the per-person cap is looked at first, so the five slots go to five
    # different users, however their 50 draws interleave.
    loaded = campaign()
    first = replace(loaded.activities[0], caps=Caps(winners=5))
    raffle = await build(replace(loaded, activities=(first, *loaded.activities[1:])), None)
    await configure(raffle, Participation(ACTIVITY, caps=PersonCaps(Limit(1, Period.DAY))))
    draws = [Draw(f"u{n % 10}", ACTIVITY) for n in range(50)]

    found = await answers(raffle, draws)

    winners = [d.user_id for d, a in zip(draws, found, strict=True)
               if isinstance(a, DrawResult) and a.award_id == PRIZE]  # fmt: skip
    assert len(winners) == 5
    assert len(set(winners)) == 5
    assert kinds(found)["prize"] == 5


async def test_each_prize_at_most_once_per_person(build: Build) -> None:
    raffle = await build(campaign(), SettableClock(NOON))
    await configure(raffle, Participation(ACTIVITY, caps=PersonCaps(once_per_prize=True)))

    found = await answers(raffle, [Draw(f"u{n % 7}", ACTIVITY) for n in range(140)])

    assert kinds(found) == Counter({"prize": 7, "fallback:person_cap": 133})


async def test_three_joins_a_week_start_over_on_monday_in_the_activitys_zone(
    build: Build,
) -> None:
    sunday_night = datetime(2026, 11, 29, 15, 59, 59, 900_000, tzinfo=UTC)  # 23:59:59.9 +8
    clock = SettableClock(sunday_night)
    raffle = await build(campaign(rate="0", now=sunday_night), clock)
    await configure(raffle, Participation(ACTIVITY, (Policy(1, 1, joins=Limit(3, Period.WEEK)),)))

    before = await answers(raffle, [Draw("weekly", ACTIVITY) for _ in range(20)])
    clock.current = datetime(2026, 11, 29, 16, 0, 0, 100_000, tzinfo=UTC)  # Monday 00:00:00.1
    after = await answers(raffle, [Draw("weekly", ACTIVITY) for _ in range(20)])

    assert kinds(before) == Counter({"fallback:default": 3, JOIN_LIMIT_REACHED: 17})
    assert kinds(after) == Counter({"fallback:default": 3, JOIN_LIMIT_REACHED: 17})
    assert await chances_left(raffle, "weekly") == 1000 - 6


async def test_the_higher_priority_policy_admits_and_the_order_records_it(build: Build) -> None:
    raffle = await build(campaign(), SettableClock(NOON))
    await save_tag(Tag("vip", TagKind.STATIC), raffle.tags)
    await add_members("vip", ["ann"], raffle.tags)
    await raffle.tags.refresh()
    policies = (Policy(5, priority=20), Policy(6, priority=10, tag="vip"))
    await configure(raffle, Participation(ACTIVITY, policies))

    ann, bob = await answers(
        raffle, [Draw("ann", ACTIVITY, "k-ann"), Draw("bob", ACTIVITY, "k-bob")]
    )

    assert isinstance(ann, DrawResult)
    assert isinstance(bob, DrawResult)
    for user, policy in (("ann", 6), ("bob", 5)):
        async with raffle.shards.for_user(user) as uow:
            order = await uow.orders.by_request(user, f"k-{user}")
        assert order is not None
        assert order.policy_id == policy


async def test_a_user_no_policy_admits_gets_every_reason_and_keeps_the_chance(
    build: Build,
) -> None:
    raffle = await build(campaign(), SettableClock(NOON))
    policies = (
        Policy(1, 1, tag="vip"),
        Policy(2, 2, levels=frozenset({5})),
        Policy(3, 3, points_cost=10),
        Policy(4, 4, joins=Limit(0, Period.DAY)),
        Policy(5, 5, wins=Limit(0)),
    )
    await configure(raffle, Participation(ACTIVITY, policies))
    [warm] = await answers(raffle, [Draw("nobody", ACTIVITY)])

    assert isinstance(warm, NotAdmitted)
    assert warm.reasons == {
        1: NOT_IN_AUDIENCE, 2: LEVEL_REQUIRED, 3: INSUFFICIENT_POINTS,
        4: JOIN_LIMIT_REACHED, 5: WIN_LIMIT_REACHED,
    }  # fmt: skip
    assert await chances_left(raffle, "nobody") == 1000


async def test_a_points_cost_never_takes_the_balance_below_zero_under_200_draws(
    build: Build,
) -> None:
    raffle = await build(campaign(rate="0"), SettableClock(NOON))
    costly = (Policy(1, 1, points_cost=3),)
    await configure(raffle, Participation(ACTIVITY, costly), Participation(OTHER, costly))
    async with raffle.shards.for_user("spender") as uow:
        earned = PointsOrder("p" * 24, "spender", PointsKind.EARN, 100, "gift", "test", NOON)
        assert await uow.points.add(earned)
        await uow.commit()
    # Half in each activity: the balance is the user's, shared by both.
    draws = [Draw("spender", activity) for _ in range(100) for activity in (ACTIVITY, OTHER)]

    found = await answers(raffle, draws)

    assert kinds(found) == Counter({"fallback:default": 33, INSUFFICIENT_POINTS: 167})
    async with raffle.shards.for_user("spender") as uow:
        account = await uow.points.account("spender")
        spent = await uow.points.history("spender", None, 100)
    assert account is not None
    assert account.available == 1
    assert Counter(o.kind for o in spent) == Counter({PointsKind.EARN: 1, PointsKind.SPEND: 33})
    left = await chances_left(raffle, "spender") + await chances_left(raffle, "spender", OTHER)
    assert left == 2000 - 33


async def test_an_activity_without_policies_reads_and_writes_nothing_more(
    build: Build, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Today's speed for today's activities: no participation step runs for them, in any
    # backend's store; the other activity's draws run both steps.
    calls: Counter[str] = Counter()
    for cls in (PgDrawBatch, MariaDrawBatch, SqliteDrawBatch, SqlCounterRepository):
        for name in ("standings", "count", "counts", "add"):
            if (original := getattr(cls, name, None)) is not None:
                monkeypatch.setattr(cls, name, _counted(calls, name, original))
    raffle = await build(campaign(rate="0.5"), SettableClock(NOON))
    await configure(raffle, Participation(OTHER, (Policy(1, 1, joins=Limit(100, Period.DAY)),)))

    plain = await answers(raffle, [Draw(f"u{n}", ACTIVITY) for n in range(50)])
    assert all(isinstance(a, DrawResult) for a in plain)
    assert calls == Counter()
    counted = await answers(raffle, [Draw(f"u{n}", OTHER) for n in range(50)])
    assert all(isinstance(a, DrawResult) for a in counted)
    assert calls["standings"] >= 1
    assert calls["count"] >= 1


def _counted(calls: Counter[str], name: str, original: Any) -> Any:
    async def counting(self: Any, *args: Any) -> Any:
        calls[name] += 1
        return await original(self, *args)

    return counting
