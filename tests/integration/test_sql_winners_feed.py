"""The winners' feed on real databases (SQLite 1 x 4 tables, PostgreSQL and MariaDB 2 x 4):
a walk from the first page back to the oldest win, while 10,000 wins are committed beside
it, repeats nothing and misses no win committed before it started; the `newer` polls after
it bring every later win once; thanks and fallbacks never show."""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import pytest

from raffle.bootstrap import Raffle
from raffle.domain.draws import Win, WinState
from raffle.domain.winners_feed import FeedDisplay, FeedHidden, FeedKey
from raffle.service.winners_feed import FeedPage, winners
from raffle.settings import Settings
from tests.integration.raffles import ACTIVITY, PRIZE, STRATEGY, THANKS, campaign, wired

BEFORE = 2_000  # wins committed before the walk starts (and as many thanks)
DURING = 10_000  # wins committed while it walks
BATCHES = 100  # DURING in this many rounds of transactions, one per shard touched
PAGE = 20
TIES = 100  # pairs of wins with one order id, on two shards


@pytest.fixture(params=["sqlite", "postgres", "mariadb"])
async def raffle(
    request: pytest.FixtureRequest,
    tmp_path: object,
    make_database_url: Callable[[str], Awaitable[str]],
) -> AsyncIterator[Raffle]:
    if request.param == "sqlite":
        settings = Settings(database_url=f"sqlite:///{tmp_path}/feed.db", shard_tables=4)
    else:
        first, second = (
            await make_database_url(request.param),
            await make_database_url(request.param),
        )
        settings = Settings(database_url=first, shard_urls=second, shard_tables=4)
    loaded = campaign(rate="0.5", stock=100_000)
    shown = replace(loaded.activities[0], winners_feed=FeedDisplay.TICKER)
    raffle = await wired(settings, replace(loaded, activities=(shown,)))
    yield raffle
    await raffle.close()


@dataclass
class Ledger:
    """The wins written, by their key in the feed."""

    raffle: Raffle
    shards: int
    wins: dict[FeedKey, Win] = field(default_factory=dict)
    thanks: set[str] = field(default_factory=set)  # their order ids

    def __post_init__(self) -> None:
        # users grouped by shard, so that a test can pick one on any shard
        self.by_shard: dict[int, list[str]] = {i: [] for i in range(self.shards)}
        n = 0
        while min(len(u) for u in self.by_shard.values()) < 200:
            user = f"player{n:05d}"
            self.by_shard[self.raffle.shards.index(user)].append(user)
            n += 1

    def win(self, ms: int, shard: int, award: int = PRIZE, order_id: str | None = None) -> Win:
        user = random.choice(self.by_shard[shard])
        order_id = order_id or f"{ms:012x}{secrets.randbits(47):012x}"
        at = datetime.fromtimestamp(ms / 1000, UTC)
        return Win(order_id, user, ACTIVITY, STRATEGY, award, None, "default", at, WinState.CREATE)

    async def commit(self, wins: list[Win]) -> None:
        """Each shard's wins in one transaction, the shards side by side."""
        by_shard: dict[int, list[Win]] = {}
        for w in wins:
            by_shard.setdefault(self.raffle.shards.index(w.user_id), []).append(w)

        async def one(ws: list[Win]) -> None:
            async with self.raffle.shards.for_user(ws[0].user_id) as uow:
                for w in ws:
                    await uow.wins.add(w)
                await uow.commit()

        await asyncio.gather(*(one(ws) for ws in by_shard.values()))
        for w in wins:
            if w.award_id == PRIZE:
                self.wins[FeedKey(w.order_id, self.raffle.shards.index(w.user_id))] = w
            else:
                self.thanks.add(w.order_id)


def _ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


async def _page(raffle: Raffle, cursor: str | None = None, after: str | None = None) -> FeedPage:
    return await winners(
        ACTIVITY, cursor, after, PAGE, catalogue=raffle.catalogue, shards=raffle.shards
    )


async def test_a_walk_beside_10000_new_wins_repeats_none_and_misses_none_from_before(
    raffle: Raffle,
) -> None:
    shards = len(raffle.shards.every())
    ledger = Ledger(raffle, shards)
    start = _ms(datetime.now(UTC)) - 3_600_000  # the wins before: the hour before now
    before: list[Win] = []
    for i in range(BEFORE - 2 * TIES):
        before.append(ledger.win(start + random.randrange(3_600_000), i % shards))
        before.append(ledger.win(start + random.randrange(3_600_000), i % shards, THANKS))
    for _ in range(TIES):  # one order id on two shards: the key still orders them
        ms, a, b = start + random.randrange(3_600_000), *random.sample(range(shards), 2)
        tied = f"{ms:012x}{secrets.randbits(47):012x}"
        before += [ledger.win(ms, a, order_id=tied), ledger.win(ms, b, order_id=tied)]
    for chunk in range(0, len(before), 500):
        await ledger.commit(before[chunk : chunk + 500])
    committed_before = set(ledger.wins)
    assert len(committed_before) == BEFORE

    done = asyncio.Event()
    rounds = [0]
    progress = asyncio.Condition()

    async def insert() -> None:
        """Each round: half the wins new, half drawn an hour ago and committed only now."""
        for _ in range(BATCHES):
            now = _ms(datetime.now(UTC))
            late = [ledger.win(start + random.randrange(3_600_000), random.randrange(shards))
                    for _ in range(DURING // BATCHES // 2)]  # fmt: skip
            new = [ledger.win(now + random.randrange(1000), random.randrange(shards))
                   for _ in range(DURING // BATCHES // 2)]  # fmt: skip
            thanks = [ledger.win(now, random.randrange(shards), THANKS) for _ in range(10)]
            await ledger.commit(late + new + thanks)
            async with progress:
                rounds[0] += 1
                progress.notify_all()
        done.set()

    first = await _page(raffle)
    head = first.newer
    assert head is not None
    inserter = asyncio.create_task(insert())

    async def reached(n: int) -> None:
        async with progress:
            await progress.wait_for(lambda: rounds[0] >= n)

    walked, page, pages = [e.key for e in first.wins], first, 1
    while page.next is not None:
        await reached(min(pages, BATCHES))  # the walk never outruns the inserts
        page = await _page(raffle, cursor=page.next)
        walked += [e.key for e in page.wins]
        pages += 1
    assert done.is_set(), "the 10,000 wins were all committed while the walk went on"
    await inserter
    assert len(ledger.wins) == BEFORE + DURING

    assert len(walked) == len(set(walked)), "no win twice"
    assert walked == sorted(walked, reverse=True), "newest first, by a total order"
    assert committed_before <= set(walked), "no win from before the walk missed"
    assert ledger.thanks
    assert {k.order_id for k in walked}.isdisjoint(ledger.thanks), "wins only"

    newer: list[FeedKey] = []
    after: str | None = head
    while True:
        polled = await _page(raffle, after=after)
        newer += [e.key for e in polled.wins]
        if not polled.wins:
            break
        after = polled.newer
    later = {k for k in ledger.wins if k > walked[0]}
    assert len(newer) == len(set(newer)), "no newer win twice"
    assert set(newer) == later, "every newer win"
    assert set(walked).isdisjoint(newer)
    # What neither saw: wins drawn before the head that committed after the walk passed
    # them (the documented limit of a newest-first feed); a new walk sees every one.
    unseen = set(ledger.wins) - set(walked) - set(newer)
    assert all(k < walked[0] for k in unseen)
    again: list[FeedKey] = []
    cursor: str | None = None
    while True:
        page = await _page(raffle, cursor=cursor)
        again += [e.key for e in page.wins]
        if (cursor := page.next) is None:
            break
    assert again == sorted(ledger.wins, reverse=True)


async def test_a_hidden_feed_is_not_found(raffle: Raffle) -> None:
    async with raffle.uow() as uow:
        activity = await uow.activities.get(ACTIVITY)
        assert activity is not None
        await uow.activities.save(replace(activity, winners_feed=FeedDisplay.HIDDEN))
        await uow.commit()
    raffle.catalogue.forget()
    with pytest.raises(FeedHidden):
        await _page(raffle)


async def test_the_feed_shows_the_prize_masked_winner_and_time(raffle: Raffle) -> None:
    ledger = Ledger(raffle, len(raffle.shards.every()))
    now = _ms(datetime.now(UTC) - timedelta(seconds=5))
    win = ledger.win(now, 0)
    await ledger.commit([win, ledger.win(now + 1, 1, THANKS)])
    page = await _page(raffle)
    assert [(e.winner, e.title, e.won_at) for e in page.wins] == [
        (f"{win.user_id[0]}***{win.user_id[-1]}", "lamp", win.created_at)
    ]
    assert page.next is None
    assert page.display is FeedDisplay.TICKER
