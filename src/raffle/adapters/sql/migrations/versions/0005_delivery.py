"""Delivered effects: one `award_delivery` table per shard table index.

Revision ID: 0005
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op

from raffle.adapters.sql.delivery_tables import define
from raffle.adapters.sql.tables import NAMING_CONVENTION

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tables() -> list[sa.Table]:
    count = int(context.config.attributes.get("shard_tables", 1))
    metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)
    return [define(index, metadata) for index in range(count)]


def upgrade() -> None:
    bind = op.get_bind()
    for table in _tables():
        table.create(bind)


def downgrade() -> None:
    bind = op.get_bind()
    for table in reversed(_tables()):
        table.drop(bind)
