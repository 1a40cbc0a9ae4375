"""Queued draws: each activity's mode (`activity.queued`), the tickets and the queue counters
(`tables.tickets`).

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.config import queued_column
from raffle.adapters.sql.tables.tickets import draw_ticket, ticket_queue

revision: str = "0027"
down_revision: str | Sequence[str] | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision([ticket_queue, draw_ticket], lambda i, m: [])


def upgrade() -> None:
    op.add_column("activity", queued_column())
    new_tables.create(_tables())


def downgrade() -> None:
    new_tables.drop(_tables())
    op.drop_column("activity", "queued")
