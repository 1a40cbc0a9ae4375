"""Column types that behave the same on every database."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.dialects import mysql
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class UtcDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes in, aware UTC datetimes out; stored as naive UTC with microseconds.

    Naive storage because SQLite and MariaDB have no time zone type; microseconds because
    MariaDB's DATETIME drops them unless asked, and day boundaries are tested to 0.1 s.
    """

    impl = DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime: pass an aware one")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        stored = datetime.fromisoformat(value) if isinstance(value, str) else value
        assert isinstance(stored, datetime)
        return stored.replace(tzinfo=UTC) if stored.tzinfo is None else stored.astimezone(UTC)
