"""The queued draws' tickets and each activity's queue counters (configuration database)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, String, Table, Text

from raffle.adapters.sql.tables.config import metadata
from raffle.adapters.sql.tables.types import UtcDateTime

# One row an activity that took a ticket: its row lock makes acceptances take turns.
ticket_queue = Table(
    "ticket_queue",
    metadata,
    Column("activity_id", BigInteger, primary_key=True, autoincrement=False),
    Column("accepted", BigInteger, nullable=False),  # the last ticket number given
    Column("drawn", BigInteger, nullable=False),  # the last ticket number settled
    mysql_charset="utf8mb4",
)

draw_ticket = Table(
    "draw_ticket",
    metadata,
    Column("ticket", String(40), primary_key=True),
    Column("activity_id", BigInteger, nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("user_id", String(32), nullable=False),
    Column("request_key", String(128), nullable=True),
    Column("accepted_at", UtcDateTime, nullable=False),
    Column("state", String(8), nullable=False),
    Column("order_id", String(32), nullable=True),
    Column("refusal", String(64), nullable=True),
    Column("detail", Text, nullable=True),
    Index(None, "activity_id", "seq", unique=True),
    Index(None, "user_id", "request_key", unique=True),
    Index(None, "state", "accepted_at"),
    mysql_charset="utf8mb4",
)
