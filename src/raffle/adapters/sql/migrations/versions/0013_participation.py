"""Participation policies and caps; each user's counters of joins and wins on every shard
table; the policy that admitted each raffle order.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import sqlalchemy as sa
from alembic import context, op

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.participation import CONFIG_TABLES, define
from raffle.adapters.sql.tables.shard import policy_column

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    def shard(index: int, metadata: sa.MetaData) -> list[sa.Table]:
        return [define(index, metadata, wins=False)]  # 0030 adds the wins column

    return new_tables.of_revision(CONFIG_TABLES, shard)


def _raffle_orders() -> Iterator[str]:
    for index in range(int(context.config.attributes.get("shard_tables", 1))):
        yield f"raffle_order_{index:03d}"


def upgrade() -> None:
    new_tables.create(_tables())
    for table in _raffle_orders():
        op.add_column(table, policy_column())


def downgrade() -> None:
    for table in _raffle_orders():
        op.drop_column(table, "policy_id")
    new_tables.drop(_tables())
