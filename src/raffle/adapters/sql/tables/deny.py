"""The deny lists' tables (configuration database): entries, blocking rules, their version row."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, Integer, String, Table

from raffle.adapters.sql.tables.config import AutoId, metadata
from raffle.adapters.sql.tables.types import UtcDateTime

# An entry of a deny list (domain/deny.py); the evidence columns are set on automatic ones.
deny_entry = Table(
    "deny_entry",
    metadata,
    Column("id", AutoId, primary_key=True, autoincrement=True),
    Column("kind", String(8), nullable=False),
    Column("value", String(64), nullable=False),
    Column("reason", String(200), nullable=False),
    Column("added_by", String(64), nullable=False),
    Column("added_at", UtcDateTime, nullable=False),
    Column("expires_at", UtcDateTime, nullable=True),
    Column("rule_id", BigInteger, nullable=True),
    Column("event", String(16), nullable=True),
    Column("event_count", Integer, nullable=True),
    Column("window_minutes", Integer, nullable=True),
    Column("first_event_at", UtcDateTime, nullable=True),
    Column("last_event_at", UtcDateTime, nullable=True),
    Index(None, "kind", "value"),
    mysql_charset="utf8mb4",
)

# An operator's rule for automatic blocking (domain/blocking.py).
block_rule = Table(
    "block_rule",
    metadata,
    Column("id", AutoId, primary_key=True, autoincrement=True),
    Column("event", String(16), nullable=False),
    Column("subject", String(8), nullable=False),
    Column("threshold", Integer, nullable=False),
    Column("window_minutes", Integer, nullable=False),
    Column("block_minutes", Integer, nullable=False),
    Column("created_by", String(64), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
)

# One row: every change to entries or rules moves `version` on, in its transaction, as the
# tags' row does: processes look at it, and hear of it through the news.
deny_version = Table(
    "deny_version",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("version", BigInteger, nullable=False),
)
