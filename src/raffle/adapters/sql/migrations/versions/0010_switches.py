"""Runtime switches, their version row and their audit (`tables.switch*`).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.config import switch, switch_change, switch_version

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision([switch, switch_version, switch_change], lambda i, m: [])


def upgrade() -> None:
    tables = _tables()
    new_tables.create(tables)
    op.bulk_insert(tables[1], [{"id": 1, "version": 0}])


def downgrade() -> None:
    new_tables.drop(_tables())
