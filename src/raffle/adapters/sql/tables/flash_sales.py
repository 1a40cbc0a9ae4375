"""Flash sales and their orders (configuration database): a sale's `sold` and its orders
change in one transaction, so the database itself never sells more than the stock."""

from __future__ import annotations

from sqlalchemy import BigInteger, CheckConstraint, Column, Index, Integer, String, Table, Text

from raffle.adapters.sql.tables.config import metadata
from raffle.adapters.sql.tables.types import UtcDateTime

flash_sale = Table(
    "flash_sale",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),
    Column("name", String(120), nullable=False),
    Column("description", Text, nullable=False),
    Column("image", String(500), nullable=True),
    Column("price", BigInteger, nullable=False),
    Column("currency", String(8), nullable=False),
    Column("original_price", BigInteger, nullable=True),
    Column("stock", Integer, nullable=False),
    Column("sold", Integer, nullable=False),  # orders not expired: stock - sold are left
    Column("per_user", Integer, nullable=False),
    Column("starts_at", UtcDateTime, nullable=False),
    Column("ends_at", UtcDateTime, nullable=False),
    Column("time_zone", String(64), nullable=False),
    Column("sku", BigInteger, nullable=True),
    Column("award_id", BigInteger, nullable=True),
    CheckConstraint("sold >= 0 AND sold <= stock", name="sold_within_stock"),
    mysql_charset="utf8mb4",
)

flash_order = Table(
    "flash_order",
    metadata,
    # One order per unit a user took: a redelivered purchase finds its row.
    Column("sale_id", BigInteger, primary_key=True, autoincrement=False),
    Column("user_id", String(32), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("order_id", String(64), nullable=False, unique=True),
    Column("price", BigInteger, nullable=False),
    Column("currency", String(8), nullable=False),
    Column("state", String(16), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("expires_at", UtcDateTime, nullable=True),
    Column("updated_at", UtcDateTime, nullable=False),
    Index(None, "state", "expires_at"),  # the expiry job's scan
    mysql_charset="utf8mb4",
)
