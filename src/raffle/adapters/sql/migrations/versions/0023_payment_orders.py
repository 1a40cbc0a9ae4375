"""Payment orders, their history and the payments notified for them, on every shard table.

Revision ID: 0023
Revises: 0021
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.payments import define

revision: str = "0023"
down_revision: str | Sequence[str] | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision([], lambda index, metadata: define(index, metadata).all)


def upgrade() -> None:
    new_tables.create(_tables())


def downgrade() -> None:
    new_tables.drop(_tables())
