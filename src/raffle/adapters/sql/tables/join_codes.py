"""The join codes' table (configuration database): one row a code, bound once redeemed."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, String, Table

from raffle.adapters.sql.tables.config import metadata
from raffle.adapters.sql.tables.types import UtcDateTime

# A code is unused while `user_id` is NULL. The primary key makes codes unique in their
# activity (generation retries on a collision); the unique (activity, user) index makes
# "one code a user" a database constraint (every database lets it hold many NULLs).
join_code = Table(
    "join_code",
    metadata,
    Column("activity_id", BigInteger, primary_key=True, autoincrement=False),
    Column("code", String(32), primary_key=True),
    Column("source", String(64), nullable=False),
    Column("remark", String(255), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("user_id", String(32), nullable=True),
    Column("bound_at", UtcDateTime, nullable=True),
    Index(None, "activity_id", "user_id", unique=True),
    mysql_charset="utf8mb4",
)
