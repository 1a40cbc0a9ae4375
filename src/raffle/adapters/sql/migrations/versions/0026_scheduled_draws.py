"""Scheduled draws: the activity's schedule (`activity.schedule`), and each scheduled draw's
seed and frozen list, entrants and winners (`tables.scheduled`).

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.config import schedule_column
from raffle.adapters.sql.tables.scheduled import (
    scheduled_draw,
    scheduled_entrant,
    scheduled_winner,
)

revision: str = "0026"
down_revision: str | Sequence[str] | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision(
        [scheduled_draw, scheduled_entrant, scheduled_winner], lambda i, m: []
    )


def upgrade() -> None:
    op.add_column("activity", schedule_column())
    new_tables.create(_tables())


def downgrade() -> None:
    new_tables.drop(_tables())
    op.drop_column("activity", "schedule")
