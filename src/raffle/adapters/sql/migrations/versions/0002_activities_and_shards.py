"""Activities, quota packs, SKUs, users, sessions, idempotency, stock claims; shard tables.

Creates the tables from their definitions in `tables.py` and `shard_tables.py` as they stand
at this revision: a later change to any of them comes with its own migration, and this file
must then inline the old definition. Shard tables are created for every table index
0..M-1, M being `config.attributes["shard_tables"]` (default 1).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from raffle.adapters.sql.tables import config as tables
from raffle.adapters.sql.tables import revisions as new_tables
from raffle.adapters.sql.tables.shard import define

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CONFIG_TABLES = ("quota_pack", "sku", "idempotency", "stock_claim")
# The shard tables of this revision, by name without the index suffix: tables added to
# `ShardTables` later are created by their own migrations.
SHARD_TABLES = ("quota_account", "quota_day", "quota_month", "top_up_order", "raffle_order",
                "award_record", "outbox")  # fmt: skip


def _tables() -> list[sa.Table]:
    def shard(index: int, metadata: sa.MetaData) -> list[sa.Table]:
        made = define(
            index, metadata, errors=False, wins_by_user=True, policy=False, feed=False, proof=False
        )
        return [t for t in made.all if t.name[:-4] in SHARD_TABLES]

    config = [tables.metadata.tables[name] for name in CONFIG_TABLES]
    # The accounts, sessions and activities as they were then: 0009 and 0015 add to them.
    then = sa.MetaData(naming_convention=tables.NAMING_CONVENTION)
    users = tables.define_users(then, status=False)
    activity = tables.define_activity(
        then, caps=False, feed=False, queued=False
    )  # 0015, 0024, 0026, 0027
    return new_tables.of_revision([activity, *config, *users], shard)


def upgrade() -> None:
    new_tables.create(_tables())


def downgrade() -> None:
    new_tables.drop(_tables())
