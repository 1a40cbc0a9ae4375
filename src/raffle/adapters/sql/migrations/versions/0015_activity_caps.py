"""An activity's caps (total winners, total participants, every draw wins) and the claims of
their slots (`tables.caps_columns`, `tables.activity_cap_claim`).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.config import activity_cap_claim, caps_columns

revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision([activity_cap_claim], lambda i, m: [])


def upgrade() -> None:
    for column in caps_columns():
        op.add_column("activity", column)
    new_tables.create(_tables())


def downgrade() -> None:
    new_tables.drop(_tables())
    for column in reversed(caps_columns()):
        op.drop_column("activity", column.name)
