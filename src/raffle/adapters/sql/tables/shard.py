"""The user-dimension tables, one copy per shard table index (`raffle_order_003`, ...).

Every shard database holds copies 000 to M-1; a user's rows live in exactly one copy of
one database, chosen by `raffle.adapters.sql.shards.route`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sqlalchemy import BigInteger, Column, Index, Integer, MetaData, String, Table, Text

from raffle.adapters.sql.tables.config import NAMING_CONVENTION
from raffle.adapters.sql.tables.types import UtcDateTime

shard_metadata = MetaData(naming_convention=NAMING_CONVENTION)


@dataclass(frozen=True, slots=True)
class ShardTables:
    quota_account: Table
    quota_day: Table
    quota_month: Table
    top_up_order: Table
    raffle_order: Table
    award_record: Table
    outbox: Table

    @property
    def all(self) -> tuple[Table, ...]:
        return (
            self.quota_account,
            self.quota_day,
            self.quota_month,
            self.top_up_order,
            self.raffle_order,
            self.award_record,
            self.outbox,
        )


@cache
def shard_tables(index: int) -> ShardTables:
    """The tables of shard table `index`, defined once per process."""
    return define(index, shard_metadata)


ERROR_MESSAGE_LENGTH = 200


def error_columns() -> list[Column[str]]:
    """Why the last delivery attempt of an award record failed, empty otherwise: added to
    the tables by migration 0006."""
    return [
        Column("error_code", String(64), nullable=True),
        Column("error_message", String(ERROR_MESSAGE_LENGTH), nullable=True),
    ]


def policy_column() -> Column[int]:
    """The participation policy that admitted a raffle order: added by migration 0013."""
    return Column("policy_id", BigInteger, nullable=True)


def proof_column() -> Column[str]:
    """What a raffle order's receipt needs beyond the order: added by migration 0025."""
    return Column("proof", Text, nullable=True)


def define(
    index: int,
    metadata: MetaData,
    *,
    errors: bool = True,
    wins_by_user: bool = False,
    policy: bool = True,
    feed: bool = True,
    proof: bool = True,
) -> ShardTables:
    """The shard tables of one index; as migration 0002 made them with `errors=False`
    (0006 adds the award record's error columns) and `wins_by_user=True` (0008 drops the
    award record's index by user: nothing looks a user's wins up by it, they are found
    through the user's orders, and every draw paid for its upkeep) and `policy=False`
    (0013 adds the raffle order's policy), `feed=False` (0024 adds the award record's index by
    activity and order id: the winners' feed pages by it) and `proof=False` (0025 adds the
    raffle order's receipt proof)."""
    n = f"{index:03d}"
    return ShardTables(
        quota_account=Table(
            f"quota_account_{n}",
            metadata,
            Column("user_id", String(32), primary_key=True),
            Column("activity_id", BigInteger, primary_key=True, autoincrement=False),
            Column("total", Integer, nullable=False),  # every chance ever credited
            Column("total_left", Integer, nullable=False),
            Column("day", Integer, nullable=False),  # allowance per day
            Column("month", Integer, nullable=False),  # allowance per month
        ),
        quota_day=Table(
            f"quota_day_{n}",
            metadata,
            Column("user_id", String(32), primary_key=True),
            Column("activity_id", BigInteger, primary_key=True, autoincrement=False),
            Column("day", String(10), primary_key=True),  # yyyy-mm-dd in the activity's zone
            Column("day_left", Integer, nullable=False),
        ),
        quota_month=Table(
            f"quota_month_{n}",
            metadata,
            Column("user_id", String(32), primary_key=True),
            Column("activity_id", BigInteger, primary_key=True, autoincrement=False),
            Column("month", String(7), primary_key=True),
            Column("month_left", Integer, nullable=False),
        ),
        top_up_order=Table(
            f"top_up_order_{n}",
            metadata,
            Column("order_id", String(32), primary_key=True),
            Column("user_id", String(32), nullable=False),
            Column("activity_id", BigInteger, nullable=False),
            Column("sku", BigInteger, nullable=False),
            Column("out_business_no", String(64), nullable=False),
            Column("total", Integer, nullable=False),
            Column("day", Integer, nullable=False),
            Column("month", Integer, nullable=False),
            Column("created_at", UtcDateTime, nullable=False),
            Index(None, "user_id", "out_business_no", unique=True),
        ),
        raffle_order=Table(
            f"raffle_order_{n}",
            metadata,
            Column("order_id", String(32), primary_key=True),
            Column("user_id", String(32), nullable=False),
            Column("activity_id", BigInteger, nullable=False),
            Column("strategy_id", BigInteger, nullable=False),
            Column("draw_count", Integer, nullable=False),
            Column("state", String(8), nullable=False),
            Column("request_key", String(128), nullable=True),
            Column("created_at", UtcDateTime, nullable=False),
            *([policy_column()] if policy else []),
            *([proof_column()] if proof else []),
            Index(None, "user_id", "request_key", unique=True),
            Index(None, "user_id", "activity_id", "order_id"),
        ),
        award_record=Table(
            f"award_record_{n}",
            metadata,
            Column("order_id", String(32), primary_key=True),
            Column("user_id", String(32), nullable=False),
            Column("activity_id", BigInteger, nullable=False),
            Column("strategy_id", BigInteger, nullable=False),
            Column("award_id", BigInteger, nullable=False),
            Column("points", Integer, nullable=True),
            Column("rule", String(16), nullable=False),
            Column("state", String(16), nullable=False),
            Column("created_at", UtcDateTime, nullable=False),
            *(error_columns() if errors else ()),
            *([Index(None, "user_id", "activity_id", "order_id")] if wins_by_user else []),
            Index(None, "strategy_id", "award_id"),  # the count of a prize's wins (reconcile)
            *([Index(None, "activity_id", "order_id")] if feed else []),
        ),
        outbox=Table(
            f"outbox_{n}",
            metadata,
            Column("message_id", String(32), primary_key=True),
            Column("topic", String(64), nullable=False),
            Column("message_key", String(64), nullable=False),
            Column("payload", Text, nullable=False),
            Column("state", String(16), nullable=False),  # create / published / failed
            Column("attempts", Integer, nullable=False),
            Column("created_at", UtcDateTime, nullable=False),
            Column("updated_at", UtcDateTime, nullable=False),
            Index(None, "state", "updated_at"),
        ),
    )
