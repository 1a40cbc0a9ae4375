"""The row campaign loads take turns on (`tables.campaign_load`), on every database.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.config import campaign_load

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision([campaign_load], lambda index, metadata: [])


def upgrade() -> None:
    (table,) = _tables()
    new_tables.create([table])
    op.bulk_insert(table, [{"id": 1, "loads": 0}])


def downgrade() -> None:
    new_tables.drop(_tables())
