"""The outbox's backlog on every backend: what /metrics shows as raffle_outbox_backlog."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from raffle.adapters.sql.migrate import upgrade
from raffle.bootstrap import bootstrap
from raffle.domain.draws import OutboxMessage
from raffle.settings import Settings

T0 = datetime(2026, 11, 11, 0, 0, 0, 250_000, tzinfo=UTC)


async def test_the_backlog_counts_every_message_not_published_and_dates_the_oldest(
    database_url: str,
) -> None:
    await upgrade(database_url)
    raffle = bootstrap(Settings(database_url=database_url))
    try:
        (shard,) = raffle.shards.every()
        async with shard:
            assert await shard.outbox.backlog() == (0, None)
            for i in range(4):
                at = T0 + timedelta(seconds=i)
                await shard.outbox.add(OutboxMessage(f"{i:032x}", "award.won", f"o{i}", "{}", at))
            await shard.commit()
        async with shard:  # the oldest two published, the third claimed (sending)
            claimed = await shard.outbox.claim(T0 + timedelta(minutes=1), 3)
            await shard.outbox.mark([m.message_id for m in claimed[:2]], True, T0)
            await shard.commit()
        async with shard:
            assert await shard.outbox.backlog() == (2, T0 + timedelta(seconds=2))
    finally:
        await raffle.close()
