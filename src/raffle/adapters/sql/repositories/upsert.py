"""Insert-or-update by primary key as one atomic statement, in each database's own dialect."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import cache
from typing import Any

from sqlalchemy import ColumnElement, Dialect, Insert, Table, insert
from sqlalchemy.dialects import mysql, postgresql, sqlite


def upsert(
    dialect: Dialect,
    table: Table,
    row: Mapping[str, Any],
    *,
    keep: Collection[str] = (),
    computed: Mapping[str, ColumnElement[Any]] | None = None,
) -> Insert:
    """The row inserted, or written over the one with the same primary key.

    An existing row keeps its columns named in `keep`, and takes the `computed` expressions,
    which read its stored values, instead of the row's values for those columns.

    One statement rather than update-then-insert: two transactions saving the same new id
    at once then wait for each other instead of one failing on the primary key.
    """
    key = [column.name for column in table.primary_key]
    computed = computed or {}
    written = [c for c in row if c not in key and c not in keep and c not in computed]
    if dialect.name in ("mysql", "mariadb"):
        my = mysql.insert(table).values(row)
        # MySQL assigns left to right, each assignment seeing the ones before it: computed
        # columns go first, so they read the stored row and not the half-written one.
        return my.on_duplicate_key_update(
            [*computed.items(), *((c, my.inserted[c]) for c in written)]
        )
    if dialect.name == "postgresql":
        pg = postgresql.insert(table).values(row)
        return pg.on_conflict_do_update(
            index_elements=key, set_={**computed, **{c: pg.excluded[c] for c in written}}
        )
    if dialect.name == "sqlite":
        lite = sqlite.insert(table).values(row)
        return lite.on_conflict_do_update(
            index_elements=key, set_={**computed, **{c: lite.excluded[c] for c in written}}
        )
    raise NotImplementedError(f"no upsert for the {dialect.name} dialect")


def insert_ignore(dialect: Dialect, table: Table, row: Mapping[str, Any]) -> Insert:
    """The row inserted, or nothing done when its primary key exists: the row count tells.

    Nothing fails, so the transaction stays usable (a failed statement aborts a PostgreSQL
    transaction).
    """
    _check_lengths(table, row)
    if dialect.name in ("mysql", "mariadb"):
        return mysql.insert(table).values(row).prefix_with("IGNORE")
    key = [column.name for column in table.primary_key]
    if dialect.name == "postgresql":
        return postgresql.insert(table).values(row).on_conflict_do_nothing(index_elements=key)
    if dialect.name == "sqlite":
        return sqlite.insert(table).values(row).on_conflict_do_nothing(index_elements=key)
    raise NotImplementedError(f"no insert-or-ignore for the {dialect.name} dialect")


def _check_lengths(table: Table, row: Mapping[str, Any]) -> None:
    # MySQL's IGNORE also turns "too long" into a warning and stores the value cut short;
    # refuse it on every database alike.
    for name, value in row.items():
        length = getattr(table.c[name].type, "length", None)
        if isinstance(value, str) and length is not None and len(value) > length:
            raise ValueError(f"{table.name}.{name} holds at most {length} characters")


def insert_ignore_any(dialect: Dialect, table: Table, row: Mapping[str, Any]) -> Insert:
    """Like `insert_ignore`, but nothing is done when the row would repeat any unique key,
    the primary key's or another unique index's (the row count tells)."""
    _check_lengths(table, row)
    if dialect.name in ("mysql", "mariadb"):
        return mysql.insert(table).values(row).prefix_with("IGNORE")
    if dialect.name == "postgresql":
        return postgresql.insert(table).values(row).on_conflict_do_nothing()
    if dialect.name == "sqlite":
        return sqlite.insert(table).values(row).on_conflict_do_nothing()
    raise NotImplementedError(f"no insert-or-ignore for the {dialect.name} dialect")


def insert_ignore_many(dialect: Dialect, table: Table) -> Insert:
    """An INSERT for many rows at once (`.values(rows)` or executemany) that skips each row
    repeating any unique key; no length check, as the callers' values are bounded before."""
    if dialect.name in ("mysql", "mariadb"):
        return mysql.insert(table).prefix_with("IGNORE")
    if dialect.name == "postgresql":
        return postgresql.insert(table).on_conflict_do_nothing()
    if dialect.name == "sqlite":
        return sqlite.insert(table).on_conflict_do_nothing()
    raise NotImplementedError(f"no insert-or-ignore for the {dialect.name} dialect")


def insert_missing(dialect: Dialect, table: Table, row: Mapping[str, Any]) -> Insert:
    """The row inserted unless its primary key exists; the row count does not tell which.

    For hot paths on MySQL/MariaDB: a repeat key under INSERT IGNORE raises a warning (which
    the driver fetches and logs) and takes a shared next-key lock; a no-op ON DUPLICATE KEY
    UPDATE does neither, it locks just the row.
    """
    return insert_missing_for(dialect.name, table, row)


def insert_missing_for(dialect: str, table: Table, row: Mapping[str, Any]) -> Insert:
    """`insert_missing` by dialect name, for statements built once and cached."""
    key = [column.name for column in table.primary_key]
    if dialect in ("mysql", "mariadb"):
        return mysql.insert(table).values(row).on_duplicate_key_update({key[0]: table.c[key[0]]})
    if dialect == "postgresql":
        return postgresql.insert(table).values(row).on_conflict_do_nothing(index_elements=key)
    if dialect == "sqlite":
        return sqlite.insert(table).values(row).on_conflict_do_nothing(index_elements=key)
    raise NotImplementedError(f"no insert-if-missing for the {dialect} dialect")


@cache
def insert_into(table: Table) -> Insert:
    """A plain INSERT into `table`, built once per table (the hot paths run it many times)."""
    return insert(table)
