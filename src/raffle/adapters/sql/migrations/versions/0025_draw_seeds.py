"""Verifiable draws: the activities' server seeds, the players' client seeds
(`tables.fairness`), and what each raffle order's receipt needs beyond the order.

Revision ID: 0025
Revises: 0021
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import sqlalchemy as sa
from alembic import context, op

from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.fairness import client_seed, draw_seed
from raffle.adapters.sql.tables.shard import proof_column

revision: str = "0025"
down_revision: str | Sequence[str] | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    return new_tables.of_revision([draw_seed, client_seed], lambda i, m: [])


def _raffle_orders() -> Iterator[str]:
    for index in range(int(context.config.attributes.get("shard_tables", 1))):
        yield f"raffle_order_{index:03d}"


def upgrade() -> None:
    new_tables.create(_tables())
    for table in _raffle_orders():
        op.add_column(table, proof_column())


def downgrade() -> None:
    for table in _raffle_orders():
        op.drop_column(table, "proof")
    new_tables.drop(_tables())
