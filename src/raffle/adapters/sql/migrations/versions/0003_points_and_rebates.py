"""Rebate rules; points accounts, points orders and rebate orders on every shard table.

Creates the tables from their definitions as they stand at this revision (see 0002 for the
convention), shard tables for every index 0..M-1.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op

from raffle.adapters.sql import tables
from raffle.adapters.sql.points_tables import define

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CONFIG_TABLES = ("rebate_rule",)


def _tables() -> list[sa.Table]:
    count = int(context.config.attributes.get("shard_tables", 1))
    metadata = sa.MetaData(naming_convention=tables.NAMING_CONVENTION)
    found: list[sa.Table] = [
        tables.metadata.tables[name].to_metadata(metadata) for name in CONFIG_TABLES
    ]
    for index in range(count):
        found += define(index, metadata).all
    return found


def upgrade() -> None:
    bind = op.get_bind()
    for table in _tables():
        table.create(bind)


def downgrade() -> None:
    bind = op.get_bind()
    for table in reversed(_tables()):
        table.drop(bind)
