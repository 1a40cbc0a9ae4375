"""The claims of won prizes, per shard table index (`prize_claim_003`, ...): claimed or expired."""

from __future__ import annotations

from functools import cache

from sqlalchemy import Column, MetaData, String, Table

from raffle.adapters.sql.tables.shard import shard_metadata
from raffle.adapters.sql.tables.types import UtcDateTime


@cache
def prize_claim_table(index: int) -> Table:
    """The table of shard table `index`, defined once per process."""
    return define(index, shard_metadata)


def define(index: int, metadata: MetaData) -> Table:
    # One row per raffle order, written once: the primary key lets a claim and the expiry
    # job race on an order and exactly one of them win.
    return Table(
        f"prize_claim_{index:03d}",
        metadata,
        Column("order_id", String(32), primary_key=True),
        Column("user_id", String(32), nullable=False),
        Column("state", String(8), nullable=False),  # claimed / expired
        Column("at", UtcDateTime, nullable=False),
    )
