"""Awards and strategies: the odds tables with their prizes and rules.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out rather than taken from tables.py: a migration must keep meaning what it meant.
UTF8 = "utf8mb4"  # MariaDB: whatever the server default, titles are often Chinese
ID = sa.BigInteger()
AUTO_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # SQLite: INTEGER PRIMARY KEY


def upgrade() -> None:
    op.create_table(
        "award",
        sa.Column("award_id", ID, autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("title", sa.String(128), nullable=False),
        sa.Column("config", sa.String(255), nullable=False),
        sa.PrimaryKeyConstraint("award_id", name=op.f("pk_award")),
        mysql_charset=UTF8,
    )
    op.create_table(
        "strategy",
        sa.Column("strategy_id", ID, autoincrement=False, nullable=False),
        sa.Column("description", sa.String(255), nullable=False),
        sa.Column("exhaustion", sa.String(16), nullable=False),
        sa.PrimaryKeyConstraint("strategy_id", name=op.f("pk_strategy")),
        mysql_charset=UTF8,
    )
    op.create_table(
        "strategy_prize",
        sa.Column("strategy_id", ID, autoincrement=False, nullable=False),
        sa.Column("award_id", ID, autoincrement=False, nullable=False),
        sa.Column("rate_ppm", sa.Integer(), nullable=False),
        sa.Column("stock", sa.Integer(), nullable=True),
        sa.Column("sort", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("strategy_id", "award_id", name=op.f("pk_strategy_prize")),
        _strategy_fk("strategy_prize"),
        mysql_charset=UTF8,
    )
    op.create_table(
        "strategy_rule",
        sa.Column("id", AUTO_ID, autoincrement=True, nullable=False),
        sa.Column("strategy_id", ID, nullable=False),
        sa.Column("award_id", ID, nullable=True),
        sa.Column("rule_model", sa.String(16), nullable=False),
        sa.Column("rule_value", sa.String(2048), nullable=False),
        sa.Column("sort", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_strategy_rule")),
        _strategy_fk("strategy_rule"),
        mysql_charset=UTF8,
    )
    op.create_index(
        op.f("ix_strategy_rule_strategy_id_sort"), "strategy_rule", ["strategy_id", "sort"]
    )


def downgrade() -> None:
    # Dropping a table drops its indexes; MariaDB refuses to drop one a foreign key uses.
    for table in ("strategy_rule", "strategy_prize", "strategy", "award"):
        op.drop_table(table)


def _strategy_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["strategy_id"],
        ["strategy.strategy_id"],
        name=op.f(f"fk_{table}_strategy_id_strategy"),
        ondelete="CASCADE",
    )
