"""The stock-sync job on PostgreSQL + Redis: leaked units given back, wins untouched; the
stock-zero notice written by the draw that emptied the prize, again after units came back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta

from redis.asyncio import Redis

from raffle.bootstrap import Raffle
from raffle.service.draw import Draw, draw
from raffle.service.reconcile import PrizeDrift, stock_report
from raffle.service.stock_sync import sync_stock
from raffle.settings import Settings
from tests.integration.notices import kinds, notices
from tests.integration.raffles import ACTIVITY, PRIZE, STRATEGY, SettableClock, campaign, wired


async def test_leaked_units_are_given_back_and_a_sold_out_prize_noticed_at_each_crossing(
    make_database_url: Callable[[str], Awaitable[str]], redis_url: str
) -> None:
    client = Redis.from_url(redis_url)
    await client.flushdb()
    await client.aclose()
    settings = Settings(
        database_url=await make_database_url("postgres"),
        shard_urls=await make_database_url("postgres"),
        shard_tables=4,
        redis_url=redis_url,
    )
    clock = SettableClock()
    now = clock.current
    raffle = await wired(settings, campaign(rate="1", stock=30), clock)
    try:
        clock.current = now - timedelta(hours=1)  # draws that died an hour ago
        for n in range(5):
            assert await raffle.stock.take(STRATEGY, PRIZE, f"dead{n:020d}")
        clock.current = now
        for n in range(25):  # the rest of the stock, won for real
            await draw(
                Draw(f"user{n}", ACTIVITY),
                catalogue=raffle.catalogue,
                shards=raffle.shards,
                stock=raffle.stock,
                rng=raffle.rng,
                clock=raffle.clock,
                hints=raffle.hints,
            )
        [before] = await _report(raffle)
        assert (before.claims, before.wins, before.leaked, before.left) == (30, 25, 5, 0)
        assert kinds(await notices(raffle)) == ["stock_zero"]  # by the 25th draw

        async def sync() -> int:
            assert raffle.ledger is not None
            return await sync_stock(
                config=raffle.uow,
                catalogue=raffle.catalogue,
                shards=raffle.shards,
                stock=raffle.stock,
                claims=raffle.ledger,
                before=clock.current - timedelta(minutes=5),
            )

        assert await sync() == 5
        [after] = await _report(raffle)
        assert (after.claims, after.wins, after.leaked, after.left, after.drift) == (
            25,
            25,
            0,
            5,
            0,
        )
        assert kinds(await notices(raffle)) == ["stock_zero"]  # five units back on offer

        for n in range(5):
            await draw(
                Draw(f"late{n}", ACTIVITY),
                catalogue=raffle.catalogue,
                shards=raffle.shards,
                stock=raffle.stock,
                rng=raffle.rng,
                clock=raffle.clock,
                hints=raffle.hints,
            )
        assert await sync() == 0
        assert await sync() == 0
        # It ran out again: a new crossing, noticed once however often the job runs.
        assert kinds(await notices(raffle)) == ["stock_zero", "stock_zero"]
        [done] = await _report(raffle)
        assert (done.claims, done.wins, done.oversold) == (30, 30, 0)
    finally:
        await raffle.close()


async def _report(raffle: Raffle) -> list[PrizeDrift]:
    return await stock_report(
        ACTIVITY,
        catalogue=raffle.catalogue,
        shards=raffle.shards,
        stock=raffle.stock,
        claims=raffle.claims,
    )
