"""The audit log: the configuration database's chain and one per shard table, each head
row at the genesis (`tables.audit`).

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.audit import HEAD_ID, config_audit, define_shard
from raffle.domain.audit import GENESIS

revision: str = "0028"
down_revision: str | Sequence[str] | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision(
        list(config_audit.all), lambda index, metadata: define_shard(index, metadata).all
    )


def upgrade() -> None:
    tables = _tables()
    new_tables.create(tables)
    for table in tables:
        if table.name.startswith("audit_head"):
            op.bulk_insert(table, [{"id": HEAD_ID, "seq": 0, "hash": GENESIS}])


def downgrade() -> None:
    new_tables.drop(_tables())
