"""Claim terms of prizes (`tables.claim_terms_column`) and the claims of won prizes (shards).

Revision ID: 0019
Revises: 0021
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.config import claim_terms_column
from raffle.adapters.sql.tables.prize_claims import define

revision: str = "0019"
down_revision: str | Sequence[str] | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision([], lambda index, metadata: [define(index, metadata)])


def upgrade() -> None:
    op.add_column("strategy_prize", claim_terms_column())
    new_tables.create(_tables())


def downgrade() -> None:
    new_tables.drop(_tables())
    op.drop_column("strategy_prize", claim_terms_column().name)
