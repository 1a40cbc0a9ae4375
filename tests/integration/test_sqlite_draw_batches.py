"""Draws in batches on an SQLite file: the rare cases answered in a batch with other users'
draws. A transaction held open (a "plug") keeps the writer's turn, so the draws sent meanwhile
wait, and go together once it is let go."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from raffle.adapters.sql.sqlite.draw import SqliteDrawBatch
from raffle.bootstrap import Raffle
from raffle.domain.quota import NoChances, QuotaPack
from raffle.service.draw import Draw, DrawResult
from raffle.settings import Settings
from tests.integration.raffles import ACTIVITY, WELCOME, campaign, wired
from tests.integration.test_draw_batches import one
from tests.integration.test_draw_concurrency import batches_of

MONTH = 2  # the welcome pack's chances a month: the third draw of a month is refused


@pytest.fixture
async def raffle(tmp_path: Path) -> AsyncIterator[Raffle]:
    settings = Settings(database_url=f"sqlite:///{tmp_path}/raffle.db")
    made = await wired(settings, campaign(rate="1", pack=QuotaPack(WELCOME, 20, 20, MONTH)))
    yield made
    await made.close()


async def behind_a_plug(raffle: Raffle, draws: list[Draw]) -> list[DrawResult | BaseException]:
    """`draws` sent while another transaction holds the writer's turn: they wait, and go in
    one batch once it lets go."""
    held, release = asyncio.Event(), asyncio.Event()

    async def plug() -> None:
        async with raffle.shards.for_user("plug"):
            held.set()
            await release.wait()

    holding = asyncio.create_task(plug())
    await held.wait()
    tasks = [asyncio.create_task(one(raffle, cmd)) for cmd in draws]
    await asyncio.sleep(0.2)  # every draw reaches the lane
    release.set()
    await holding
    return list(await asyncio.gather(*tasks, return_exceptions=True))


async def chances(raffle: Raffle, user_id: str) -> tuple[int, int, int]:
    """What the user has left: in total, today, this month."""
    activity = await raffle.catalogue.activity(ACTIVITY)
    async with raffle.shards.for_user(user_id) as uow:
        account = await uow.quotas.get(user_id, ACTIVITY, *activity.periods(raffle.clock.now()))
    assert account is not None
    return account.total_left, account.day_left, account.month_left


async def test_a_batch_answers_first_visits_replays_and_refusals_each_its_own(
    raffle: Raffle,
) -> None:
    first = await one(raffle, Draw("replayer", ACTIVITY, "key-1"))
    for _ in range(MONTH):
        await one(raffle, Draw("spent", ACTIVITY))
    await one(raffle, Draw("regular", ACTIVITY))
    sizes = batches_of(raffle).sizes.copy()

    found = await behind_a_plug(
        raffle,
        [
            Draw("replayer", ACTIVITY, "key-1"),  # the first result again, nothing spent
            Draw("spent", ACTIVITY),  # the month's chances used up: refused
            Draw("newcomer", ACTIVITY),  # a first visit: the welcome pack, then its draw
            Draw("regular", ACTIVITY),
        ],
    )

    assert batches_of(raffle).sizes - sizes == Counter({4: 1})
    replay, refused, welcomed, regular = found
    assert isinstance(replay, DrawResult)
    assert (replay.order_id, replay.replayed) == (first.order_id, True)
    assert isinstance(refused, NoChances)
    assert isinstance(welcomed, DrawResult)
    assert isinstance(regular, DrawResult)
    assert (welcomed.draw_count, regular.draw_count) == (1, 2)
    assert await chances(raffle, "replayer") == (19, 19, 1)
    # The refusal took its total and day chances and gave them back in the batch.
    assert await chances(raffle, "spent") == (18, 18, 0)
    assert await chances(raffle, "newcomer") == (19, 19, 1)
    assert await chances(raffle, "regular") == (18, 18, 0)


async def test_a_batch_that_fails_commits_nothing_and_its_draws_go_again_alone(
    raffle: Raffle, monkeypatch: pytest.MonkeyPatch
) -> None:
    users = [f"user{n}" for n in range(5)]
    for user in users:
        await one(raffle, Draw(user, ACTIVITY))
    store = batches_of(raffle)
    sizes, failed = store.sizes.copy(), store.failed
    record = SqliteDrawBatch.record
    failures = iter([RuntimeError("the disk said no")])

    async def failing_once(self: SqliteDrawBatch, draws: Any) -> None:
        if (error := next(failures, None)) is not None:
            raise error
        await record(self, draws)

    monkeypatch.setattr(SqliteDrawBatch, "record", failing_once)
    found = await behind_a_plug(raffle, [Draw(user, ACTIVITY) for user in users])

    assert all(isinstance(f, DrawResult) for f in found)
    assert [f.draw_count for f in found if isinstance(f, DrawResult)] == [2] * len(users)
    assert store.sizes - sizes == Counter({len(users): 1, 1: len(users)})
    assert store.failed == failed + 1
    assert [await chances(raffle, user) for user in users] == [(18, 18, 0)] * len(users)
