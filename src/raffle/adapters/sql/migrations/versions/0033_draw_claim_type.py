"""A draw's claim of a chance as a row type, on PostgreSQL: postgres/draw_batch sends a batch's
claims as one array of them per shard table (`draw_batch_sql.CLAIM_COLUMNS`).

Revision ID: 0033
Revises: 0032
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0033"
down_revision: str | Sequence[str] | None = "0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE TYPE draw_claim AS (user_id varchar, activity_id bigint, day varchar, "
            "month varchar, request_key varchar, n int)"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TYPE draw_claim")
