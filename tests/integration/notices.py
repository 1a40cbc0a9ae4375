"""The operators' notices the draws wrote to the outbox, read straight from every shard table."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from raffle.adapters.sql.tables.shard import shard_tables
from raffle.bootstrap import Raffle
from raffle.domain.notices import NOTICE


async def notices(raffle: Raffle) -> list[dict[str, Any]]:
    """Every notice's body (domain StockNotice as JSON) with its outbox state, in no order."""
    found: list[dict[str, Any]] = []
    databases = raffle.engines[: len(raffle.settings.database_urls)]
    for engine in databases:
        async with engine.connect() as connection:
            for index in range(raffle.settings.shard_tables):
                outbox = shard_tables(index).outbox
                rows = await connection.execute(
                    select(outbox.c.payload, outbox.c.state).where(outbox.c.topic == NOTICE)
                )
                found += [{**json.loads(payload), "state": state} for payload, state in rows]
    return found


def kinds(found: list[dict[str, Any]]) -> list[str]:
    return sorted(n["kind"] for n in found)
