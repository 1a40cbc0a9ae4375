"""The profiles' version row (`tables.profiles.profile_version`).

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.profiles import profile_version

revision: str = "0030"
down_revision: str | Sequence[str] | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision([profile_version], lambda i, m: [])


def upgrade() -> None:
    tables = _tables()
    new_tables.create(tables)
    op.bulk_insert(tables[0], [{"id": 1, "version": 0}])


def downgrade() -> None:
    new_tables.drop(_tables())
