"""A prize's stock warning threshold (`tables.warning_columns`): operators are notified when
its stock left falls to it.

Revision ID: 0020
Revises: 0015
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from raffle.adapters.sql.tables.config import warning_columns

revision: str = "0020"
down_revision: str | Sequence[str] | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    for column in warning_columns():
        op.add_column("strategy_prize", column)


def downgrade() -> None:
    for column in reversed(warning_columns()):
        op.drop_column("strategy_prize", column.name)
