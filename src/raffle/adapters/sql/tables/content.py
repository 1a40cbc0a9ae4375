"""The paid content table (configuration database): one row a piece of content."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, String, Table, Text
from sqlalchemy.dialects import mysql

from raffle.adapters.sql.tables.config import metadata
from raffle.adapters.sql.tables.types import UtcDateTime

# MariaDB's TEXT holds 64 KB, a quarter of a body's characters in utf8mb4.
_LONG_TEXT = Text().with_variant(mysql.MEDIUMTEXT(), "mysql", "mariadb")

content = Table(
    "content",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("title", String(120), nullable=False),
    Column("summary", String(500), nullable=False),
    Column("body", _LONG_TEXT, nullable=False),  # Markdown, for holders only
    Column("preview", Text, nullable=False),  # Markdown, for everyone
    Column("cover", String(500), nullable=True),
    Column("price_cents", BigInteger, nullable=False),
    Column("state", String(16), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Index(None, "state", "id"),  # what is on sale, by id
    mysql_charset="utf8mb4",
)
