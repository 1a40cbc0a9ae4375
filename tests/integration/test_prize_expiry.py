"""Validity of won prizes on real databases (PostgreSQL and MariaDB sharded 2 x 4, SQLite):
"7 days from the win" ends as day 8 begins in the activity's zone, the job marks every shard,
a claim after it is refused, and the stock stays won."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from raffle.bootstrap import Raffle
from raffle.domain.activity import Activity, ActivityState
from raffle.domain.awards import Award, AwardKind
from raffle.domain.campaign import Campaign
from raffle.domain.fulfilment import Address, CodePool
from raffle.domain.prize_claims import (
    ClaimConditionUnmet,
    ClaimState,
    ClaimTerms,
    PrizeExpired,
    Validity,
    ValidityKind,
)
from raffle.domain.profiles import Profile
from raffle.domain.quota import QuotaPack
from raffle.domain.strategy import Fallback, Strategy, StrategyPrize
from raffle.service.draw import Draw, draw
from raffle.service.effects import deliver_coupon
from raffle.service.fulfilment import give_address
from raffle.service.prize_claims import claim_code, expire_prizes, record_claim
from raffle.service.wins import my_wins
from raffle.settings import Settings
from tests.integration.raffles import SettableClock, wired
from tests.unit.profile_fakes import FakeProfiles

ACTIVITY, STRATEGY, THANKS, COUPON, LAMP, WELCOME = 1, 10, 1, 2, 4, 21
ZONE = "Asia/Shanghai"  # UTC+8: its midnight is 16:00 UTC the day before
USERS = [f"u{n:03d}" for n in range(48)]
HOME = Address("张三", "138 0013 8000", "上海市 浦东新区", "世纪大道 100 号", "200120")
SEVEN_DAYS = Validity(ValidityKind.DAYS, days=7)


def shanghai(year: int, month: int, day: int, *time: int) -> datetime:
    """A wall-clock time in Shanghai, as the UTC instant it is."""
    hour, minute, second = (*time, 0, 0, 0)[:3]
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC) - timedelta(hours=8)


WON_AT = shanghai(2026, 11, 10, 23, 59, 30)  # day 1 is the 10th there, half a minute to go
DAY_8 = shanghai(2026, 11, 17)


def campaign() -> Campaign:
    awards = (
        Award(THANKS, AwardKind.THANKS, "thanks"),
        Award(COUPON, AwardKind.COUPON, "30 元话费券", "phone-30"),
        Award(LAMP, AwardKind.PHYSICAL, "小米台灯"),
    )
    prizes = (
        StrategyPrize(COUPON, Decimal("0.5"), 100, claim=ClaimTerms(SEVEN_DAYS)),
        StrategyPrize(LAMP, Decimal("0.5"), 100, claim=ClaimTerms(SEVEN_DAYS, ("phone",))),
    )
    activity = Activity(
        ACTIVITY, "validity", STRATEGY, shanghai(2026, 11, 1), shanghai(2026, 12, 31), ZONE,
        state=ActivityState.RUNNING, welcome_pack=WELCOME,
    )  # fmt: skip
    pool = CodePool("phone-30", tuple(f"P30-{n:04d}" for n in range(100)))
    strategy = Strategy(STRATEGY, prizes, Fallback(THANKS))
    return Campaign(
        awards, (strategy,), (QuotaPack(WELCOME, 1, 1, 1),), (activity,), code_pools=(pool,)
    )


@pytest.fixture(params=["sqlite", "postgres", "mariadb"])
async def raffle(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    make_database_url: Callable[[str], Awaitable[str]],
) -> AsyncIterator[Raffle]:
    """SQLite alone, or two databases x 4 tables of PostgreSQL or MariaDB."""
    if request.param == "sqlite":
        settings = Settings(database_url=f"sqlite:///{tmp_path}/raffle.db")
    else:
        first = await make_database_url(request.param)
        second = await make_database_url(request.param)
        settings = Settings(database_url=first, shard_urls=second, shard_tables=4)
    wired_raffle = await wired(settings, campaign(), SettableClock(WON_AT))
    yield wired_raffle
    await wired_raffle.close()


def at(raffle: Raffle, when: datetime) -> None:
    assert isinstance(raffle.clock, SettableClock)
    raffle.clock.current = when


async def won(raffle: Raffle) -> dict[str, tuple[str, int]]:
    """Every user's one draw, at WON_AT: user -> (order, award), each coupon delivered."""
    awards = await raffle.catalogue.awards()
    found = {}
    for user in USERS:
        result = await draw(
            Draw(user, ACTIVITY), catalogue=raffle.catalogue, shards=raffle.shards,
            stock=raffle.stock, rng=raffle.rng, clock=raffle.clock, hints=raffle.hints,
        )  # fmt: skip
        found[user] = (result.order_id, result.award_id)
        if result.award_id == COUPON:
            async with raffle.shards.for_user(user) as uow:
                await deliver_coupon(
                    uow, order_id=result.order_id, user_id=user, award=awards[COUPON], now=WON_AT
                )
                await uow.commit()
    return found


async def claim(raffle: Raffle, user: str, order_id: str) -> str | None:
    return await claim_code(
        user, order_id, catalogue=raffle.catalogue, shards=raffle.shards,
        profiles=FakeProfiles(), config=raffle.uow, clock=raffle.clock,
    )  # fmt: skip


async def address(raffle: Raffle, user: str, order_id: str, profile: Profile) -> None:
    await give_address(
        user, order_id, HOME, catalogue=raffle.catalogue, shards=raffle.shards,
        profiles=FakeProfiles([profile]), clock=raffle.clock,
    )  # fmt: skip


async def expired_per_shard(raffle: Raffle, order_ids: list[str]) -> list[int]:
    counts = []
    for unit in raffle.shards.every():
        async with unit as uow:
            states = await uow.prize_claims.states(order_ids)
        counts.append(sum(state is ClaimState.EXPIRED for state in states.values()))
    return counts


async def expire(raffle: Raffle) -> int:
    return await expire_prizes(
        config=raffle.uow, catalogue=raffle.catalogue, shards=raffle.shards, clock=raffle.clock
    )


async def test_seven_days_from_the_win_expire_as_day_8_begins_in_shanghai_on_every_shard(
    raffle: Raffle,
) -> None:
    assert {raffle.shards.index(u) for u in USERS} == set(range(len(raffle.shards.every())))
    wins = await won(raffle)
    coupons = [(u, o) for u, (o, award) in wins.items() if award == COUPON]
    lamps = [(u, o) for u, (o, award) in wins.items() if award == LAMP]
    assert len(coupons) + len(lamps) == len(USERS)
    assert coupons
    assert lamps
    stock = {a: await raffle.stock.left(STRATEGY, a) for a in (COUPON, LAMP)}
    keeper, kept = coupons[0]
    at(raffle, WON_AT + timedelta(minutes=1))  # day 2 in Shanghai, still day 1 in UTC
    code = await claim(raffle, keeper, kept)
    assert code is not None
    assert code.startswith("P30-")

    at(raffle, DAY_8 - timedelta(microseconds=1))  # the last instant of day 7
    assert await expire(raffle) == 0
    user, order = coupons[-1]
    page = await my_wins(
        user, None, None, 5, catalogue=raffle.catalogue, shards=raffle.shards,
        config=raffle.uow, profiles=FakeProfiles(), clock=raffle.clock,
    )  # fmt: skip
    (prize,) = page.prizes
    assert prize.claim is not None
    assert prize.claim.state is ClaimState.OPEN
    assert prize.claim.window.closes == DAY_8
    assert prize.coupon_code is None  # not shown before it is claimed

    at(raffle, DAY_8)
    assert await expire(raffle) == len(USERS) - 1  # all but the one claimed
    assert await expire(raffle) == 0
    per_shard = await expired_per_shard(raffle, [o for o, _ in wins.values()])
    assert all(n > 0 for n in per_shard)
    assert sum(per_shard) == len(USERS) - 1

    with pytest.raises(PrizeExpired):
        await claim(raffle, user, order)
    lamp_user, lamp_order = lamps[0]
    with pytest.raises(PrizeExpired):
        await address(raffle, lamp_user, lamp_order, Profile(lamp_user, phone="+8613800138000"))
    assert await claim(raffle, keeper, kept) == code  # a claimed prize stays claimed
    # The prizes were won: their stock is not given back.
    assert {a: await raffle.stock.left(STRATEGY, a) for a in (COUPON, LAMP)} == stock


async def test_a_physical_prize_is_addressed_only_with_the_conditions_met(raffle: Raffle) -> None:
    wins = await won(raffle)
    user, order = next((u, o) for u, (o, award) in wins.items() if award == LAMP)

    with pytest.raises(ClaimConditionUnmet) as refused:
        await address(raffle, user, order, Profile(user))
    assert refused.value.missing == ["phone"]
    async with raffle.shards.for_user(user) as uow:
        assert await uow.shipments.get(order) is None  # nothing changed
        assert await uow.prize_claims.states([order]) == {}

    await address(raffle, user, order, Profile(user, phone="+8613800138000"))
    at(raffle, DAY_8 + timedelta(days=3))
    await address(raffle, user, order, Profile(user))  # claimed: its address may still change
    assert await expire(raffle) == len(USERS) - 1


async def test_claims_and_the_expiry_job_racing_on_200_orders_leave_one_state_each(
    raffle: Raffle,
) -> None:
    wins = await won(raffle)
    orders = [(u, o) for u, (o, _) in wins.items()]
    at(raffle, DAY_8)

    async def claiming(user: str, order_id: str) -> str:
        try:
            async with raffle.shards.for_user(user) as uow:
                await record_claim(uow, user, order_id, DAY_8)
                await uow.commit()
        except PrizeExpired:
            return "expired"
        return "claimed"

    outcomes = await asyncio.gather(
        *(claiming(u, o) for u, o in orders for _ in range(4)), *(expire(raffle) for _ in range(8))
    )

    claimed = {
        orders[i // 4][1] for i, o in enumerate(outcomes[: 4 * len(orders)]) if o == "claimed"
    }
    stored: dict[str, ClaimState] = {}
    for unit in raffle.shards.every():
        async with unit as uow:
            stored |= await uow.prize_claims.states([o for _, o in orders])
    assert set(stored) == {o for _, o in orders}  # one state each, claimed or expired
    assert {o for o, s in stored.items() if s is ClaimState.CLAIMED} == claimed
    assert sum(outcomes[4 * len(orders) :]) == len(orders) - len(claimed)  # type: ignore[arg-type]
