"""Prize effects: the coupon code pools (configuration); access grants and shipments (shards).

Like 0002, creates the tables from their definitions as they stand at this revision (a later
change comes with its own migration and this file then inlines the old shape), the code
pools on every database and the shard tables for every table index 0..M-1.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.prizes import code_pool, define

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision([code_pool], lambda index, metadata: define(index, metadata).all)


def upgrade() -> None:
    new_tables.create(_tables())


def downgrade() -> None:
    new_tables.drop(_tables())
