"""Payment orders, their history and the payments notified for them, one copy per shard
table index (`payment_order_003`, ...), beside the user's access grants."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sqlalchemy import BigInteger, Column, Index, Integer, MetaData, String, Table

from raffle.adapters.sql.tables.shard import shard_metadata
from raffle.adapters.sql.tables.types import UtcDateTime

ERROR_LENGTH = 200


@dataclass(frozen=True, slots=True)
class PaymentTables:
    order: Table
    history: Table
    payment: Table

    @property
    def all(self) -> tuple[Table, ...]:
        return (self.order, self.history, self.payment)


@cache
def payment_tables(index: int) -> PaymentTables:
    """The tables of shard table `index`, defined once per process."""
    return define(index, shard_metadata)


def define(index: int, metadata: MetaData) -> PaymentTables:
    n = f"{index:03d}"
    return PaymentTables(
        order=Table(
            f"payment_order_{n}",
            metadata,
            Column("out_trade_no", String(40), primary_key=True),
            Column("user_id", String(32), nullable=False),
            Column("content_id", String(64), nullable=False),
            Column("amount_cents", BigInteger, nullable=False),
            Column("subject", String(128), nullable=False),
            Column("state", String(16), nullable=False),
            # The content id while the order is open, NULL after: the unique index below
            # makes "one open order per user and content" the database's rule.
            Column("open_content", String(64), nullable=True),
            Column("trade_no", String(64), nullable=True),  # the payment that paid it
            Column("created_at", UtcDateTime, nullable=False),
            Column("updated_at", UtcDateTime, nullable=False),
            Index(None, "user_id", "open_content", unique=True),
            Index(None, "user_id", "out_trade_no"),  # the user's orders, newest first
            Index(None, "state", "created_at"),  # expiry
            mysql_charset="utf8mb4",
        ),
        history=Table(
            f"payment_history_{n}",
            metadata,
            # No state is entered twice (the transitions form no cycle).
            Column("out_trade_no", String(40), primary_key=True),
            Column("to_state", String(16), primary_key=True),
            Column("from_state", String(16), nullable=True),
            Column("cause", String(32), nullable=False),
            Column("at", UtcDateTime, nullable=False),
        ),
        payment=Table(
            f"payment_{n}",
            metadata,
            Column("trade_no", String(64), primary_key=True),  # recorded once
            Column("out_trade_no", String(40), nullable=False),
            Column("user_id", String(32), nullable=False),
            Column("amount_cents", BigInteger, nullable=False),
            Column("state", String(16), nullable=False),
            Column("attempts", Integer, nullable=False),  # refund attempts
            Column("last_error", String(ERROR_LENGTH), nullable=True),
            Column("notified_at", UtcDateTime, nullable=False),
            Column("updated_at", UtcDateTime, nullable=False),
            Index(None, "out_trade_no"),
            Index(None, "state", "updated_at"),  # refunds to retry, failed ones
            mysql_charset="utf8mb4",
        ),
    )
