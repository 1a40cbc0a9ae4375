"""Drop the award records' index by (user_id, activity_id, order_id) in every shard table.

No query looks a win up by user: a user's wins are found through their orders (the order's
own index by user, then the record by its primary key). Every draw that wins paid for the
index's upkeep: an entry written, and logged, in the same transaction.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from alembic import context, op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ["user_id", "activity_id", "order_id"]


def _award_records() -> Iterator[tuple[str, str]]:
    """Each award record table and the name its index got from the naming convention."""
    for index in range(int(context.config.attributes.get("shard_tables", 1))):
        table = f"award_record_{index:03d}"
        yield table, f"ix_{table}_{'_'.join(COLUMNS)}"


def upgrade() -> None:
    for table, index in _award_records():
        op.drop_index(index, table_name=table)


def downgrade() -> None:
    for table, index in _award_records():
        op.create_index(index, table, COLUMNS)
