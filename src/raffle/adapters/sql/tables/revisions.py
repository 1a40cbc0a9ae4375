"""What the migrations that create tables share: the tables of a revision, made and dropped.

A revision names its configuration tables and how to define its shard tables for one table
index; the shard tables are created for every index 0..M-1, M being the migration config's
`shard_tables` attribute (default 1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import sqlalchemy as sa
from alembic import context, op

from raffle.adapters.sql.tables.config import NAMING_CONVENTION

ShardDefinition = Callable[[int, sa.MetaData], Iterable[sa.Table]]


def of_revision(config: Sequence[sa.Table], shard: ShardDefinition) -> list[sa.Table]:
    count = int(context.config.attributes.get("shard_tables", 1))
    metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)
    found = [table.to_metadata(metadata) for table in config]
    for index in range(count):
        found += shard(index, metadata)
    return found


def create(tables: Sequence[sa.Table]) -> None:
    bind = op.get_bind()
    for table in tables:
        table.create(bind)


def drop(tables: Sequence[sa.Table]) -> None:
    bind = op.get_bind()
    for table in reversed(tables):
        table.drop(bind)
