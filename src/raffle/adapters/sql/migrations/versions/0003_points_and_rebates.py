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

from raffle.adapters.sql.tables import config as tables
from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.points import define

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CONFIG_TABLES = ("rebate_rule",)


def _tables() -> list[sa.Table]:
    config = [tables.metadata.tables[name] for name in CONFIG_TABLES]
    return new_tables.of_revision(config, lambda index, metadata: define(index, metadata).all)


def upgrade() -> None:
    new_tables.create(_tables())


def downgrade() -> None:
    new_tables.drop(_tables())
