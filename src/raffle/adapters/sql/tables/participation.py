"""Participation: the activities' policies and caps (configuration database), and each
user's counters of joins and wins (one copy per shard table index, beside their quota)."""

from __future__ import annotations

from functools import cache

from sqlalchemy import BigInteger, Boolean, Column, Integer, MetaData, String, Table

from raffle.adapters.sql.tables.config import metadata
from raffle.adapters.sql.tables.shard import shard_metadata

COUNTER_LENGTH = 48  # "p<policy id>:2026-W48", "cap:2026-11-24", "won:<award id>"

participation_policy = Table(
    "participation_policy",
    metadata,
    Column("activity_id", BigInteger, primary_key=True, autoincrement=False),
    Column("policy_id", BigInteger, primary_key=True, autoincrement=False),
    Column("priority", Integer, nullable=False),
    Column("tag", String(64), nullable=True),  # NULL: everyone
    Column("levels", String(255), nullable=False),  # "3,4"; empty: any level
    Column("points_cost", Integer, nullable=False),
    Column("joins_limit", Integer, nullable=True),  # NULL: no limit
    Column("joins_period", String(16), nullable=True),
    Column("wins_limit", Integer, nullable=True),
    Column("wins_period", String(16), nullable=True),
    mysql_charset="utf8mb4",
)

person_cap = Table(
    "person_cap",
    metadata,
    Column("activity_id", BigInteger, primary_key=True, autoincrement=False),
    Column("wins_limit", Integer, nullable=True),  # per person, in the activity
    Column("wins_period", String(16), nullable=True),
    Column("once_per_prize", Boolean, nullable=False),
)

CONFIG_TABLES = (participation_policy, person_cap)


@cache
def participation_table(index: int) -> Table:
    """The counters of shard table `index`, defined once per process."""
    return define(index, shard_metadata)


def define(index: int, metadata: MetaData, *, wins: bool = True) -> Table:
    # One row per user, activity and counter; a counter's name holds its period, so a new
    # day starts at no row (zero) and nothing has to be reset. A row counts joins (`n`) and
    # wins: a policy whose joins and wins have one period reads and writes one row a draw.
    return Table(
        f"participation_{index:03d}",
        metadata,
        Column("user_id", String(32), primary_key=True),
        Column("activity_id", BigInteger, primary_key=True, autoincrement=False),
        Column("counter", String(COUNTER_LENGTH), primary_key=True),
        Column("n", Integer, nullable=False),
        *([wins_column()] if wins else []),
    )


def wins_column() -> Column[int]:
    """A counter row's wins (`n` its joins): added by migration 0030."""
    return Column("wins", Integer, nullable=False, server_default="0")
