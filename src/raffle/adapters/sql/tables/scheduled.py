"""Scheduled draws: each one's seed and frozen list, its entrants, its winners (configuration)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Column, Index, Integer, String, Table, Text, false
from sqlalchemy.dialects.mysql import VARCHAR
from sqlalchemy.dialects.postgresql import VARCHAR as PG_VARCHAR

from raffle.adapters.sql.tables.config import metadata
from raffle.adapters.sql.tables.types import UtcDateTime

# Entrant ids sort by their bytes on every database (SQLite's default): the published hash
# is over that order, which PostgreSQL's and MariaDB's default collations do not keep.
ENTRANT_ID = (
    String(32)
    .with_variant(PG_VARCHAR(32, collation="C"), "postgresql")
    .with_variant(VARCHAR(32, collation="utf8mb4_bin"), "mysql", "mariadb")
)

# One row a scheduled activity: its seed (secret until `drawn_at`), the frozen list's size and
# hash (set once, at the cutoff), the entrants the draw skipped (JSON list) and when it drew.
scheduled_draw = Table(
    "scheduled_draw",
    metadata,
    Column("activity_id", BigInteger, primary_key=True, autoincrement=False),
    Column("seed", String(64), nullable=False),  # hex
    Column("commitment", String(64), nullable=False),
    Column("entrants", Integer, nullable=True),
    Column("entrants_hash", String(64), nullable=True),
    Column("frozen_at", UtcDateTime, nullable=True),
    Column("drawn_at", UtcDateTime, nullable=True),
    Column("skipped", Text, nullable=True),
    mysql_charset="utf8mb4",
)

scheduled_entrant = Table(
    "scheduled_entrant",
    metadata,
    Column("activity_id", BigInteger, primary_key=True, autoincrement=False),
    Column("user_id", ENTRANT_ID, primary_key=True),
    Column("entered_at", UtcDateTime, nullable=False),
    mysql_charset="utf8mb4",
)

# The winners in the order they were picked; `recorded` once the win and its outbox message
# are in the winner's shard (the order id is chosen with the pick, so that is idempotent).
scheduled_winner = Table(
    "scheduled_winner",
    metadata,
    Column("activity_id", BigInteger, primary_key=True, autoincrement=False),
    Column("award_id", BigInteger, primary_key=True, autoincrement=False),
    Column("rank_no", Integer, primary_key=True, autoincrement=False),
    Column("position", Integer, nullable=False),
    Column("user_id", String(32), nullable=False),
    Column("order_id", String(24), nullable=False),
    Column("recorded", Boolean, nullable=False, server_default=false()),
    Index(None, "activity_id", "user_id"),
    mysql_charset="utf8mb4",
)
