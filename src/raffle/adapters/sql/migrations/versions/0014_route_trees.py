"""Decision trees, each saved version a row (`tables.route_tree`).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.config import route_tree

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision([route_tree], lambda i, m: [])


def upgrade() -> None:
    new_tables.create(_tables())


def downgrade() -> None:
    new_tables.drop(_tables())
