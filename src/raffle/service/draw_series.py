"""Draws of an activity per minute across every shard: the console's live chart."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

from raffle.domain.users import InvalidInput
from raffle.service.catalogue import Catalogue
from raffle.service.ports import Shards

MAX_MINUTES = 24 * 60


async def draws_over_time(
    activity_id: int, minutes: int, *, now: datetime, catalogue: Catalogue, shards: Shards
) -> list[tuple[datetime, int]]:
    """The last `minutes` minutes up to and including the current one, oldest first, each
    with its draws (zero included, so the series has one point per minute)."""
    if not 1 <= minutes <= MAX_MINUTES:
        raise InvalidInput(f"minutes must be from 1 to {MAX_MINUTES}")
    await catalogue.activity(activity_id)  # 404 for an unknown activity
    current = now.replace(second=0, microsecond=0)
    since = current - timedelta(minutes=minutes - 1)
    counts: Counter[datetime] = Counter()
    for uow in shards.every():
        async with uow:
            counts.update(await uow.orders.per_minute(activity_id, since))
    return [(m, counts[m]) for m in (since + timedelta(minutes=i) for i in range(minutes))]
