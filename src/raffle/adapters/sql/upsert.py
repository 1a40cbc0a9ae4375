"""Insert-or-update by primary key as one atomic statement, in each database's own dialect."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Dialect, Insert, Table
from sqlalchemy.dialects import mysql, postgresql, sqlite


def upsert(dialect: Dialect, table: Table, row: Mapping[str, Any]) -> Insert:
    """The row inserted, or written over the one with the same primary key.

    One statement rather than update-then-insert: two transactions saving the same new id
    at once then wait for each other instead of one failing on the primary key.
    """
    key = [column.name for column in table.primary_key]
    if dialect.name in ("mysql", "mariadb"):
        my = mysql.insert(table).values(row)
        return my.on_duplicate_key_update({c: my.inserted[c] for c in row if c not in key})
    if dialect.name == "postgresql":
        pg = postgresql.insert(table).values(row)
        return pg.on_conflict_do_update(
            index_elements=key, set_={c: pg.excluded[c] for c in row if c not in key}
        )
    if dialect.name == "sqlite":
        lite = sqlite.insert(table).values(row)
        return lite.on_conflict_do_update(
            index_elements=key, set_={c: lite.excluded[c] for c in row if c not in key}
        )
    raise NotImplementedError(f"no upsert for the {dialect.name} dialect")
