"""A raffle whose wins are delivered: a CHANCES prize and the THANKS fallback, on PostgreSQL
(2 x 4 shards) with RabbitMQ; helpers to draw wins and to compare effects with facts."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from aio_pika import connect

from raffle.adapters.sql.migrate import upgrade
from raffle.bootstrap import Raffle, bootstrap
from raffle.domain.activity import Activity, ActivityState
from raffle.domain.awards import Award, AwardKind
from raffle.domain.campaign import Campaign
from raffle.domain.delivery import WON
from raffle.domain.draws import WinState
from raffle.domain.flash_sales import PAID, PURCHASED
from raffle.domain.payments import NOTIFIED
from raffle.domain.quota import QuotaPack, Sku
from raffle.domain.strategy import Exhaustion, Fallback, Strategy, StrategyPrize
from raffle.domain.tickets import QUEUED
from raffle.service.campaigns import load_campaign
from raffle.service.delivery import DeliveryCounts, delivery_counts
from raffle.service.draw import Draw, draw
from raffle.service.ports import dead_letters
from raffle.settings import Settings

ACTIVITY, STRATEGY, THANKS, CHANCES, POISON = 1, 10, 1, 2, 3
WELCOME, BONUS, SKU = 21, 22, 501
WELCOME_PACK = QuotaPack(WELCOME, 50, 50, 50)
BONUS_PACK = QuotaPack(BONUS, 3, 3, 3)  # what one CHANCES win credits


def delivery_campaign(*, chances_rate: str = "0.5", poison_rate: str = "0") -> Campaign:
    now = datetime.now(UTC)
    prizes = [StrategyPrize(CHANCES, Decimal(chances_rate))]
    if Decimal(poison_rate):
        prizes.append(StrategyPrize(POISON, Decimal(poison_rate)))
    strategy = Strategy(STRATEGY, tuple(prizes), Fallback(THANKS), (), Exhaustion.FALLBACK)
    activity = Activity(
        ACTIVITY, "delivery", STRATEGY, now - timedelta(days=1), now + timedelta(days=1),
        "UTC", state=ActivityState.RUNNING, welcome_pack=WELCOME,
    )  # fmt: skip
    awards = (
        Award(THANKS, AwardKind.THANKS, "thanks"),
        Award(CHANCES, AwardKind.CHANCES, "three more draws", str(SKU)),
        Award(POISON, AwardKind.PHYSICAL, "a lamp nobody ships yet"),
    )
    sku = Sku(SKU, ACTIVITY, BONUS, stock=10)  # a prize credits without selling stock
    return Campaign(awards, (strategy,), (WELCOME_PACK, BONUS_PACK), (activity,), (sku,))


async def pipeline(settings: Settings, loaded: Campaign | None = None) -> Raffle:
    """Migrated, loaded and started."""
    for url in settings.database_urls:
        await upgrade(url, shard_tables=settings.shard_tables)
    raffle = bootstrap(settings)
    if loaded is not None:
        await load_campaign(loaded, raffle.uow())
    await raffle.start()
    return raffle


async def fresh_queues(url: str) -> None:
    """Delete the queues a test before may have left messages in, or declared with other
    arguments (a delivery limit of other settings): every topic the service declares."""
    connection = await connect(url)
    async with connection:
        channel = await connection.channel()
        for topic in (WON, NOTIFIED, QUEUED, PURCHASED, PAID):
            for name in (topic, dead_letters(topic)):
                await channel.queue_delete(name)


async def draw_wins(raffle: Raffle, users: int, each: int) -> list[str]:
    """users x each draws, the users' in parallel; the order ids."""

    async def one_user(n: int) -> list[str]:
        orders = []
        for _ in range(each):
            result = await draw(
                Draw(f"u{n:05d}", ACTIVITY),
                catalogue=raffle.catalogue,
                shards=raffle.shards,
                stock=raffle.stock,
                rng=raffle.rng,
                clock=raffle.clock,
                hints=raffle.hints,
            )
            orders.append(result.order_id)
        return orders

    done = await asyncio.gather(*(one_user(n) for n in range(users)))
    return [order for orders in done for order in orders]


async def counts(raffle: Raffle, unpublished_after: float = 0.0) -> DeliveryCounts:
    before = raffle.clock.now() - timedelta(seconds=unpublished_after)
    return await delivery_counts(raffle.shards, before)


async def drained(raffle: Raffle, records: int, within: float) -> DeliveryCounts:
    """Wait until every record is settled (completed or failed) and every outbox message
    published; the last counts."""
    deadline = time.monotonic() + within
    while True:
        found = await counts(raffle)
        if found.records == records and found.created == 0 and found.unpublished == 0:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"not drained after {within}s: {found}")
        await asyncio.sleep(0.2)


async def effects_match_facts(raffle: Raffle, users: int, each: int) -> None:
    """Every user's chances: the welcome pack plus one bonus pack per CHANCES win that was
    delivered, no more (a duplicate would credit twice) and no less."""
    activity = await raffle.catalogue.activity(ACTIVITY)
    day, month = activity.day(raffle.clock.now()), activity.month(raffle.clock.now())
    for n in range(users):
        user = f"u{n:05d}"
        async with raffle.shards.for_user(user) as uow:
            account = await uow.quotas.get(user, ACTIVITY, day, month)
            wins = await _chances_wins(uow, user)
        assert account is not None
        assert account.total == WELCOME_PACK.total + BONUS_PACK.total * wins, user
        assert account.total_left == account.total - each, user


async def _chances_wins(uow: object, user: str) -> int:
    history = await uow.orders.history(user, ACTIVITY, None, 10_000)  # type: ignore[attr-defined]
    completed = [w for _, w in history if w.award_id == CHANCES]
    assert all(w.state is WinState.COMPLETED for w in completed)
    return len(completed)
