"""Stock warnings on every stock backend: of 300 draws at once, exactly one crosses the
prize's warning threshold and one empties it, each writing one notice with its win."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from redis.asyncio import Redis

from raffle.adapters.sql.mariadb.draw_batch import MariaDrawBatch
from raffle.adapters.sql.postgres.draw_batch import PgDrawBatch
from raffle.domain.notices import NoticeKind, StockNotice
from raffle.service.draw import Draw
from raffle.service.draw_batch import BatchedDraws
from raffle.service.notices import message
from raffle.settings import Settings
from tests.integration.notices import kinds, notices
from tests.integration.raffles import ACTIVITY, PRIZE, STRATEGY, Build, campaign, wired
from tests.integration.test_draw_concurrency import run

THRESHOLD = 20


async def test_three_hundred_draws_crossing_a_threshold_notice_it_once(build: Build) -> None:
    raffle = await build(campaign(rate="1", stock=300, warning=THRESHOLD), None)
    draws = [Draw(f"user{n:03d}", ACTIVITY) for n in range(300)]

    results, failures = await run(raffle, draws)

    assert len(results) == 300
    assert not +failures
    assert all(r.award_id == PRIZE for r in results)
    found = await notices(raffle)
    assert kinds(found) == ["stock_warning", "stock_zero"]
    warning = next(n for n in found if n["kind"] == "stock_warning")
    assert (warning["strategy_id"], warning["award_id"]) == (STRATEGY, PRIZE)
    assert (warning["left"], warning["stock"], warning["warning_surplus"]) == (20, 300, 20)
    # Written with the win of the draw whose take crossed: that draw committed.
    assert warning["order_id"] in {r.order_id for r in results}


async def test_a_prize_without_a_threshold_notices_only_running_out(build: Build) -> None:
    raffle = await build(campaign(rate="1", stock=50), None)

    results, _ = await run(raffle, [Draw(f"user{n:03d}", ACTIVITY) for n in range(80)])

    assert sum(r.award_id == PRIZE for r in results) == 50
    assert kinds(await notices(raffle)) == ["stock_zero"]


@pytest.mark.parametrize("backend", ["postgres", "mariadb"])
async def test_notices_owed_by_failed_draws_are_written_in_a_batch_of_their_own(
    backend: str, make_database_url: Callable[[str], Awaitable[str]]
) -> None:
    settings = Settings(database_url=await make_database_url(backend), shard_tables=4)
    raffle = await wired(settings, campaign(warning=THRESHOLD), None)
    try:
        draws = raffle.shards.draws
        assert isinstance(draws, BatchedDraws)
        now = datetime.now(UTC)
        owed = [
            (f"user{n}", message(StockNotice(NoticeKind.STOCK_WARNING, ACTIVITY, STRATEGY,
                                             PRIZE, 100, THRESHOLD, THRESHOLD, f"order{n}"), now))
            for n in range(12)
        ]  # fmt: skip
        async with draws.batches.begin(0) as batch:  # what service/draw_batch's _announce does
            await batch.announce(owed)
            await batch.commit()

        found = await notices(raffle)
        assert sorted(n["order_id"] for n in found) == sorted(f"order{n}" for n in range(12))
        assert {n["state"] for n in found} == {"create"}  # for the relay to send
    finally:
        await raffle.close()


@pytest.mark.parametrize(
    ("backend", "batch_class"), [("postgres", PgDrawBatch), ("mariadb", MariaDrawBatch)]
)
async def test_a_crossing_whose_batch_failed_after_others_took_past_it_is_noticed_once(
    backend: str,
    batch_class: type[PgDrawBatch | MariaDrawBatch],
    make_database_url: Callable[[str], Awaitable[str]],
    redis_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = Redis.from_url(redis_url)
    await client.flushdb()
    await client.aclose()
    settings = Settings(
        database_url=await make_database_url(backend), shard_tables=4, redis_url=redis_url
    )
    raffle = await wired(settings, campaign(rate="1", stock=10, warning=5), None)
    try:
        for n in range(4):  # 6 left: the next take lands on the threshold
            assert await raffle.stock.take(STRATEGY, PRIZE, f"earlier{n:016d}")
        recording, failures = batch_class.record, [RuntimeError("the disk is full")]

        async def record(self: PgDrawBatch | MariaDrawBatch, drawn: Any) -> None:
            if failures:
                # Another draw takes past the threshold meanwhile; then this batch fails.
                assert await raffle.stock.take(STRATEGY, PRIZE, "meanwhile0000000000")
                raise failures.pop()
            await recording(self, drawn)

        monkeypatch.setattr(batch_class, "record", record)

        [result], _ = await run(raffle, [Draw("alice", ACTIVITY)])

        # Its unit came back with 5 left: the stock never rose above the threshold again, so
        # the crossing stands, written on its own; the draw went again and took the 5th.
        assert result.award_id == PRIZE
        assert await raffle.stock.left(STRATEGY, PRIZE) == 4
        [notice] = await notices(raffle)
        assert (notice["kind"], notice["left"]) == ("stock_warning", 5)
        assert notice["order_id"] != result.order_id  # the failed attempt's
    finally:
        await raffle.close()
