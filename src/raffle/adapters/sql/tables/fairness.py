"""The activities' server seeds and the players' own client seeds (configuration database)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, Integer, String, Table

from raffle.adapters.sql.tables.config import metadata
from raffle.adapters.sql.tables.types import UtcDateTime

# One row a period of an activity; `seed` is secret until `ends_at` has passed.
draw_seed = Table(
    "draw_seed",
    metadata,
    Column("activity_id", BigInteger, primary_key=True, autoincrement=False),
    Column("period", Integer, primary_key=True, autoincrement=False),
    Column("seed", String(64), nullable=False),  # hex
    Column("commitment", String(64), nullable=False),  # its SHA-256: a receipt finds it so
    Column("starts_at", UtcDateTime, nullable=False),
    Column("ends_at", UtcDateTime, nullable=False),
    Index(None, "commitment", unique=True),
    mysql_charset="utf8mb4",
)

client_seed = Table(
    "client_seed",
    metadata,
    Column("user_id", String(32), primary_key=True),
    Column("seed", String(64), nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Index(None, "updated_at"),  # each process reads what changed since it last looked
    mysql_charset="utf8mb4",
)
