"""Why a delivery failed: the error columns of every `award_record` table.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from alembic import context, op

from raffle.adapters.sql.tables.shard import error_columns

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _award_records() -> Iterator[str]:
    for index in range(int(context.config.attributes.get("shard_tables", 1))):
        yield f"award_record_{index:03d}"


def upgrade() -> None:
    for table in _award_records():
        for column in error_columns():
            op.add_column(table, column)


def downgrade() -> None:
    for table in _award_records():
        for column in reversed(error_columns()):
            op.drop_column(table, column.name)
