"""Tags, their members and their version row (`tables.tags`).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.tags import tag, tag_member, tag_version

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision([tag, tag_member, tag_version], lambda i, m: [])


def upgrade() -> None:
    tables = _tables()
    new_tables.create(tables)
    op.bulk_insert(tables[2], [{"id": 1, "version": 0}])


def downgrade() -> None:
    new_tables.drop(_tables())
