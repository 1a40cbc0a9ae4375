"""The tags' tables (configuration database): tags, static tags' members, their version row."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Integer, String, Table, Text

from raffle.adapters.sql.tables.config import metadata

# A tag (domain/tags.py): `condition` is a dynamic tag's expression, empty for a static one.
tag = Table(
    "tag",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("kind", String(8), nullable=False),
    Column("condition", Text, nullable=False),
    Column("description", String(200), nullable=False),
    # The version of its last change, definition or members: what processes keep of it
    # (its compiled condition, its members) stays until this moves on.
    Column("revision", BigInteger, nullable=False),
)

# A static tag's members. Deleted with their tag by the store (no cascade: SQLite would need
# its foreign keys switched on per connection).
tag_member = Table(
    "tag_member",
    metadata,
    Column("tag", String(64), primary_key=True),
    Column("user_id", String(32), primary_key=True),
)

# One row: every change to tags or members moves `version` on, in its transaction, as the
# switches' row does: processes poll it, and its row lock makes changes take turns.
tag_version = Table(
    "tag_version",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("version", BigInteger, nullable=False),
)
