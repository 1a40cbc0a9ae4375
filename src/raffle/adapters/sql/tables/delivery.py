"""The delivered-effects table of each shard table index (`award_delivery_003`, ...)."""

from __future__ import annotations

from functools import cache

from sqlalchemy import BigInteger, Column, MetaData, String, Table

from raffle.adapters.sql.tables.shard import shard_metadata
from raffle.adapters.sql.tables.types import UtcDateTime


@cache
def delivery_table(index: int) -> Table:
    """The table of shard table `index`, defined once per process."""
    return define(index, shard_metadata)


def define(index: int, metadata: MetaData) -> Table:
    # One row per delivered win, written in the transaction that completes the award record:
    # the primary key on the order id is what makes a redelivered message change nothing.
    return Table(
        f"award_delivery_{index:03d}",
        metadata,
        Column("order_id", String(32), primary_key=True),
        Column("user_id", String(32), nullable=False),
        Column("award_id", BigInteger, nullable=False),
        Column("kind", String(16), nullable=False),
        Column("message_id", String(32), nullable=False),
        Column("delivered_at", UtcDateTime, nullable=False),
    )
