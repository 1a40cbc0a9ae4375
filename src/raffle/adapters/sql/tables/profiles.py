"""Players' profiles (configuration database): one row a user, free attributes as JSON text."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, Integer, String, Table, Text

from raffle.adapters.sql.tables.config import metadata
from raffle.adapters.sql.tables.types import UtcDateTime

# No foreign key to `user_account`: operators import profiles of users who have not signed
# up yet (a CRM's list), and the profile is there when they do.
profile = Table(
    "profile",
    metadata,
    Column("user_id", String(32), primary_key=True),
    Column("phone", String(16), nullable=True),  # E.164: "+" and at most 15 digits
    Column("level", Integer, nullable=False),
    Column("gender", String(1), nullable=True),
    Column("birth_date", String(10), nullable=True),  # ISO "YYYY-MM-DD": one type everywhere
    Column("region", String(64), nullable=True),
    Column("channel", String(64), nullable=True),
    Column("sn", String(64), nullable=True),
    Column("attributes", Text, nullable=False),  # a JSON object, keys sorted
    Column("updated_at", UtcDateTime, nullable=False),
    # One user a number (every database lets a unique index hold many NULLs); operators
    # search by it, by level and by region.
    Index(None, "phone", unique=True),
    Index(None, "level", "user_id"),
    Index(None, "region", "user_id"),
    mysql_charset="utf8mb4",
)

# One row (id 1), moved on by every profile write in the write's transaction: a process
# without Redis looks at it to learn that another process changed a profile.
profile_version = Table(
    "profile_version",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("version", BigInteger, nullable=False),
)
