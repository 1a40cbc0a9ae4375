"""The SQL tables of awards and strategies, portable across SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
)

# Named constraints read the same on every database, so a later migration can drop them by name.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# SQLite only auto-increments a column declared exactly INTEGER PRIMARY KEY.
AutoId = BigInteger().with_variant(Integer(), "sqlite")

metadata = MetaData(naming_convention=NAMING_CONVENTION)

award = Table(
    "award",
    metadata,
    Column("award_id", BigInteger, primary_key=True, autoincrement=False),
    Column("kind", String(16), nullable=False),
    Column("title", String(128), nullable=False),
    Column("config", String(255), nullable=False, default=""),
    mysql_charset="utf8mb4",  # a server may still default to latin1; titles are often Chinese
)

strategy = Table(
    "strategy",
    metadata,
    Column("strategy_id", BigInteger, primary_key=True, autoincrement=False),
    Column("description", String(255), nullable=False, default=""),
    Column("exhaustion", String(16), nullable=False),
    mysql_charset="utf8mb4",
)

# No foreign key to `award`: awards and strategies are published independently, and the
# campaign checks that every award a strategy names exists before either is stored.
strategy_prize = Table(
    "strategy_prize",
    metadata,
    Column(
        "strategy_id",
        BigInteger,
        ForeignKey("strategy.strategy_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("award_id", BigInteger, primary_key=True, autoincrement=False),
    Column("rate_ppm", Integer, nullable=False),  # StrategyPrize.weight: the rate in millionths
    Column("stock", Integer, nullable=True),  # NULL: unlimited
    Column("sort", Integer, nullable=False),  # the operator's display order
    # The place in the strategy's tuple: `sort` may tie, and the draw engine's seeded
    # (reproducible) runs depend on the order, so `get` must give it back unchanged.
    Column("position", Integer, nullable=False),
    mysql_charset="utf8mb4",
)

# Pre-draw rules and the fallback ("luck") have no award; a prize's post-draw rules carry it.
strategy_rule = Table(
    "strategy_rule",
    metadata,
    Column("id", AutoId, primary_key=True, autoincrement=True),
    Column(
        "strategy_id",
        BigInteger,
        ForeignKey("strategy.strategy_id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("award_id", BigInteger, nullable=True),
    Column("rule_model", String(16), nullable=False),
    Column("rule_value", String(2048), nullable=False),
    Column("sort", Integer, nullable=False),
    Index(None, "strategy_id", "sort"),
    mysql_charset="utf8mb4",
)
