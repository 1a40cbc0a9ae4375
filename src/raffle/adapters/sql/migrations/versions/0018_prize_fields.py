"""A prize's switch and card (`tables.prize_columns`) and uploaded prize images
(`tables.prize_image`).

Revision ID: 0018
Revises: 0021
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.config import prize_columns, prize_image

revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision([prize_image], lambda i, m: [])


def upgrade() -> None:
    for column in prize_columns():
        op.add_column("strategy_prize", column)
    new_tables.create(_tables())


def downgrade() -> None:
    new_tables.drop(_tables())
    for column in reversed(prize_columns()):
        op.drop_column("strategy_prize", column.name)
