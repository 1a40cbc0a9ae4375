"""The user-dimension tables of points and rebates, one copy per shard table index.

Kept beside `shard_tables` (same index, same database as the user's other rows) so that a
rebate, its top-up and its points are written in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sqlalchemy import BigInteger, Column, Index, Integer, MetaData, String, Table

from raffle.adapters.sql.tables.shard import shard_metadata
from raffle.adapters.sql.tables.types import UtcDateTime


@dataclass(frozen=True, slots=True)
class PointsTables:
    points_account: Table
    points_order: Table
    rebate_order: Table

    @property
    def all(self) -> tuple[Table, ...]:
        return (self.points_account, self.points_order, self.rebate_order)


@cache
def points_tables(index: int) -> PointsTables:
    """The tables of shard table `index`, defined once per process."""
    return define(index, shard_metadata)


def define(index: int, metadata: MetaData) -> PointsTables:
    n = f"{index:03d}"
    return PointsTables(
        points_account=Table(
            f"points_account_{n}",
            metadata,
            Column("user_id", String(32), primary_key=True),
            Column("total", BigInteger, nullable=False),  # every point ever earned
            # Spent only by `available >= amount` guarded updates: never below zero.
            Column("available", BigInteger, nullable=False),
        ),
        points_order=Table(
            f"points_order_{n}",
            metadata,
            Column("order_id", String(32), primary_key=True),
            Column("user_id", String(32), nullable=False),
            Column("kind", String(8), nullable=False),  # earn / spend
            Column("amount", BigInteger, nullable=False),
            Column("out_business_no", String(64), nullable=False),
            Column("reason", String(64), nullable=False),
            Column("created_at", UtcDateTime, nullable=False),
            Index(None, "user_id", "out_business_no", unique=True),  # applied once
            Index(None, "user_id", "order_id"),  # the user's history, newest first
            mysql_charset="utf8mb4",
        ),
        rebate_order=Table(
            f"rebate_order_{n}",
            metadata,
            Column("order_id", String(32), primary_key=True),
            Column("user_id", String(32), nullable=False),
            Column("activity_id", BigInteger, nullable=False),
            Column("behaviour", String(32), nullable=False),
            Column("business_key", String(64), nullable=False),
            Column("sku", BigInteger, nullable=True),
            Column("points", Integer, nullable=True),
            Column("created_at", UtcDateTime, nullable=False),
            # Rebated once; also the index a month of sign-ins is read by (key prefix range).
            Index(None, "user_id", "activity_id", "behaviour", "business_key", unique=True),
            mysql_charset="utf8mb4",
        ),
    )
