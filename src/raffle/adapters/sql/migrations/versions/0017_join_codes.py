"""Join codes (`tables.join_codes`) and an activity's need of one; who locked or unlocked an
account, when and why; sessions ended by an operator kept as ended until they would expire.

Revision ID: 0017
Revises: 0015
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.config import (
    account_status_change,
    join_code_column,
    session_ended_column,
)
from raffle.adapters.sql.tables.join_codes import join_code

revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision([join_code, account_status_change], lambda i, m: [])


def upgrade() -> None:
    op.add_column("activity", join_code_column())
    op.add_column("session", session_ended_column())
    new_tables.create(_tables())


def downgrade() -> None:
    new_tables.drop(_tables())
    op.drop_column("session", "ended_at")
    op.drop_column("activity", "join_code_required")
