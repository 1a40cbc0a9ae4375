"""The winners' feed: how each activity shows it (`activity.show_winning_list`), and each
award record table's index by (activity_id, order_id), which the feed pages by.

Revision ID: 0024
Revises: 0021
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from alembic import context, op

from raffle.adapters.sql.tables.config import feed_column

revision: str = "0024"
down_revision: str | Sequence[str] | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ["activity_id", "order_id"]


def _award_records() -> Iterator[tuple[str, str]]:
    """Each award record table and the name the naming convention gives its index."""
    for index in range(int(context.config.attributes.get("shard_tables", 1))):
        table = f"award_record_{index:03d}"
        yield table, f"ix_{table}_{'_'.join(COLUMNS)}"


def upgrade() -> None:
    op.add_column("activity", feed_column())
    for table, index in _award_records():
        op.create_index(index, table, COLUMNS)


def downgrade() -> None:
    for table, index in _award_records():
        op.drop_index(index, table_name=table)
    op.drop_column("activity", "show_winning_list")
