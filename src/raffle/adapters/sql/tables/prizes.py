"""Tables of prize effects: coupon code pools (configuration) and, per shard table index,
access grants and shipments (user dimension, `access_grant_003`, ...)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sqlalchemy import BigInteger, Column, Index, MetaData, String, Table

from raffle.adapters.sql.tables.config import metadata
from raffle.adapters.sql.tables.shard import shard_metadata
from raffle.adapters.sql.tables.types import UtcDateTime

# A code is free while `order_id` is NULL. The unique order id makes "one code per order"
# a database constraint (every database lets a unique index hold many NULLs).
code_pool = Table(
    "code_pool",
    metadata,
    Column("pool", String(64), primary_key=True),
    Column("code", String(128), primary_key=True),
    Column("order_id", String(32), nullable=True),
    Column("user_id", String(32), nullable=True),
    Column("handed_at", UtcDateTime, nullable=True),
    Index(None, "order_id", unique=True),
    Index(None, "pool", "order_id", "code"),  # the free codes of a pool, in order
)


@dataclass(frozen=True, slots=True)
class PrizeTables:
    access_grant: Table
    shipment: Table

    @property
    def all(self) -> tuple[Table, ...]:
        return (self.access_grant, self.shipment)


@cache
def prize_tables(index: int) -> PrizeTables:
    """The tables of shard table `index`, defined once per process."""
    return define(index, shard_metadata)


def define(index: int, metadata: MetaData) -> PrizeTables:
    n = f"{index:03d}"
    return PrizeTables(
        access_grant=Table(
            f"access_grant_{n}",
            metadata,
            Column("user_id", String(32), primary_key=True),
            Column("content_id", String(64), primary_key=True),
            Column("order_id", String(32), nullable=False),  # what granted it
            Column("granted_at", UtcDateTime, nullable=False),
            Index(None, "order_id", unique=True),
            mysql_charset="utf8mb4",
        ),
        shipment=Table(
            f"shipment_{n}",
            metadata,
            Column("order_id", String(32), primary_key=True),
            Column("user_id", String(32), nullable=False),
            Column("award_id", BigInteger, nullable=False),
            Column("state", String(16), nullable=False),
            Column("name", String(64), nullable=True),  # the address, NULL until given
            Column("phone", String(32), nullable=True),
            Column("region", String(128), nullable=True),
            Column("line", String(255), nullable=True),
            Column("postcode", String(16), nullable=True),
            Column("tracking", String(64), nullable=True),
            Column("created_at", UtcDateTime, nullable=False),
            Column("updated_at", UtcDateTime, nullable=False),
            Index(None, "state", "order_id"),  # operators' work lists
            mysql_charset="utf8mb4",  # names and addresses are mostly Chinese
        ),
    )
