"""The audit log's chains: the configuration database's (`audit_entry`, `audit_head`), and one
per shard table index (`audit_entry_003`, `audit_head_003`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sqlalchemy import BigInteger, Column, Integer, MetaData, String, Table, Text

from raffle.adapters.sql.tables.config import metadata
from raffle.adapters.sql.tables.shard import shard_metadata
from raffle.adapters.sql.tables.types import UtcDateTime
from raffle.domain.audit import ACTOR_MAX, KIND_MAX, SUBJECT_MAX

HEAD_ID = 1  # a head table's one row, written by the migration that makes it


@dataclass(frozen=True, slots=True)
class AuditTables:
    entry: Table
    head: Table  # one row: the last entry's sequence number and hash, locked by each append

    @property
    def all(self) -> tuple[Table, ...]:
        return (self.entry, self.head)


def define(suffix: str, metadata_: MetaData) -> AuditTables:
    return AuditTables(
        entry=Table(
            f"audit_entry{suffix}",
            metadata_,
            Column("seq", BigInteger, primary_key=True, autoincrement=False),
            Column("at", UtcDateTime, nullable=False),
            Column("kind", String(KIND_MAX), nullable=False),
            Column("subject", String(SUBJECT_MAX), nullable=False),
            Column("actor", String(ACTOR_MAX), nullable=True),
            Column("details", Text, nullable=False),
            Column("prev", String(64), nullable=False),
            Column("hash", String(64), nullable=False),
            mysql_charset="utf8mb4",
        ),
        head=Table(
            f"audit_head{suffix}",
            metadata_,
            Column("id", Integer, primary_key=True, autoincrement=False),
            Column("seq", BigInteger, nullable=False),
            Column("hash", String(64), nullable=False),
        ),
    )


config_audit = define("", metadata)


@cache
def audit_tables(index: int) -> AuditTables:
    """The tables of shard table `index`, defined once per process."""
    return define_shard(index, shard_metadata)


def define_shard(index: int, metadata_: MetaData) -> AuditTables:
    return define(f"_{index:03d}", metadata_)
