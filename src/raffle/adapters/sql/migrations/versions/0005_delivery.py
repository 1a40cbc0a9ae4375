"""Delivered effects: one `award_delivery` table per shard table index.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.delivery import define

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision([], lambda index, metadata: [define(index, metadata)])


def upgrade() -> None:
    new_tables.create(_tables())


def downgrade() -> None:
    new_tables.drop(_tables())
