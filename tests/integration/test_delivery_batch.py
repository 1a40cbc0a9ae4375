"""Deliveries together on each backend: a batch per shard transaction, duplicates and unknown
orders in it, and concurrent batches of the same messages, each win delivered once."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

from raffle.domain.delivery import UnknownWin
from raffle.domain.draws import WinState
from raffle.service.delivery import deliver_together, won_message
from raffle.settings import Settings
from tests.integration.delivery_world import (
    counts,
    delivery_campaign,
    draw_wins,
    effects_match_facts,
    pipeline,
)


async def test_batches_deliver_each_win_once(database_url: str) -> None:
    raffle = await pipeline(Settings(database_url=database_url), delivery_campaign())
    try:
        orders = await draw_wins(raffle, users=10, each=6)
        messages = []
        for uow in raffle.shards.every():
            async with uow:
                wins = await uow.wins.in_state(WinState.CREATE, 1000)
            messages += [won_message(win, raffle.clock.now()) for win in wins]
        assert sorted(m.key for m in messages) == sorted(orders)
        stray = json.loads(messages[0].payload) | {"order_id": "f" * 24}
        unknown = replace(messages[0], payload=json.dumps(stray), key="f" * 24)
        ctx = raffle.delivery()
        first = messages[:30] + messages[:5] + [unknown]  # duplicates in one batch
        outcomes = await deliver_together(first, ctx)
        assert outcomes[:35] == [None] * 35
        assert isinstance(outcomes[35], UnknownWin)
        # The same messages again, in concurrent batches (redeliveries racing).
        rounds = await asyncio.gather(*(deliver_together(messages, ctx) for _ in range(4)))
        assert all(outcome is None for outcomes in rounds for outcome in outcomes)
        found = await counts(raffle)
        assert (found.records, found.completed, found.delivered) == (60, 60, 60)
        assert found.created == 0
        await effects_match_facts(raffle, users=10, each=6)
        async with raffle.shards.for_user("u00000") as uow:
            assert (await uow.wins.states()).get(WinState.CREATE, 0) == 0
    finally:
        await raffle.close()
