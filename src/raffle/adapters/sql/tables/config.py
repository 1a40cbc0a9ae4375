"""The configuration tables (one database): awards, strategies, activities, SKUs, users.

Portable across SQLite, PostgreSQL and MariaDB. The user-dimension tables, sharded by user
id, are in `shard_tables`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    false,
    true,
)
from sqlalchemy.dialects.mysql import MEDIUMBLOB, VARCHAR

from raffle.adapters.sql.tables.types import UtcDateTime

# Named constraints read the same on every database, so a later migration can drop them by name.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# SQLite only auto-increments a column declared exactly INTEGER PRIMARY KEY.
AutoId = BigInteger().with_variant(Integer(), "sqlite")

metadata = MetaData(naming_convention=NAMING_CONVENTION)

award = Table(
    "award",
    metadata,
    Column("award_id", BigInteger, primary_key=True, autoincrement=False),
    Column("kind", String(16), nullable=False),
    Column("title", String(128), nullable=False),
    Column("config", String(255), nullable=False, default=""),
    mysql_charset="utf8mb4",  # a server may still default to latin1; titles are often Chinese
)

strategy = Table(
    "strategy",
    metadata,
    Column("strategy_id", BigInteger, primary_key=True, autoincrement=False),
    Column("description", String(255), nullable=False, default=""),
    Column("exhaustion", String(16), nullable=False),
    mysql_charset="utf8mb4",
)


def warning_columns() -> list[Column[Any]]:
    """A prize's stock warning threshold (`StrategyPrize.warning_surplus`), added by
    migration 0020: NULL, no warning."""
    return [Column("warning_surplus", Integer, nullable=True)]


def claim_terms_column() -> Column[str]:
    """A prize's claim terms (domain `ClaimTerms`, as `terms_json` writes them), added by
    migration 0019: NULL, as in rows from before it, is no terms."""
    return Column("claim_terms", String(1024), nullable=True)


def prize_columns() -> list[Column[Any]]:
    """A strategy prize's switch and card (domain `StrategyPrize.enabled`, `PrizeCard`),
    added by migration 0018: rows from before are enabled, with an empty card."""
    return [
        Column("enabled", Boolean, nullable=False, server_default=true()),
        Column("level", Integer, nullable=True),
        Column("level_name", String(32), nullable=False, server_default=""),
        Column("image", String(512), nullable=False, server_default=""),
        Column("description", String(255), nullable=False, server_default=""),
        Column("win_tips", String(255), nullable=False, server_default=""),
        Column("priority", Integer, nullable=False, server_default="0"),
        Column("cell", Integer, nullable=True),
        Column("value_cents", BigInteger, nullable=True),
    ]


# No foreign key to `award`: awards and strategies are published independently, and the
# campaign checks that every award a strategy names exists before either is stored.
strategy_prize = Table(
    "strategy_prize",
    metadata,
    Column(
        "strategy_id",
        BigInteger,
        ForeignKey("strategy.strategy_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("award_id", BigInteger, primary_key=True, autoincrement=False),
    Column("rate_ppm", Integer, nullable=False),  # StrategyPrize.weight: the rate in millionths
    Column("stock", Integer, nullable=True),  # NULL: unlimited
    Column("sort", Integer, nullable=False),  # the operator's display order
    # The place in the strategy's tuple: `sort` may tie, and the draw engine's seeded
    # (reproducible) runs depend on the order, so `get` must give it back unchanged.
    Column("position", Integer, nullable=False),
    *warning_columns(),
    claim_terms_column(),
    *prize_columns(),
    mysql_charset="utf8mb4",
)

# Pre-draw rules and the fallback ("luck") have no award; a prize's post-draw rules carry it.
strategy_rule = Table(
    "strategy_rule",
    metadata,
    Column("id", AutoId, primary_key=True, autoincrement=True),
    Column(
        "strategy_id",
        BigInteger,
        ForeignKey("strategy.strategy_id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("award_id", BigInteger, nullable=True),
    Column("rule_model", String(16), nullable=False),
    Column("rule_value", String(2048), nullable=False),
    Column("sort", Integer, nullable=False),
    Index(None, "strategy_id", "sort"),
    mysql_charset="utf8mb4",
)


def caps_columns() -> list[Column[Any]]:
    """An activity's caps (domain `Caps`), added by migration 0015: rows from before have none."""
    return [
        Column("award_num_limit", Integer, nullable=True),
        Column("join_people_total_limit", Integer, nullable=True),
        Column("perfect_activity", Boolean, nullable=False, server_default=false()),
    ]


def join_code_column() -> Column[bool]:
    """Whether a draw needs a join code (domain `Activity.join_code_required`), added by
    migration 0017: activities from before need none."""
    return Column("join_code_required", Boolean, nullable=False, server_default=false())


def feed_column() -> Column[str]:
    """How the activity shows its winners' feed (domain `FeedDisplay`), added by migration
    0024: rows from before hide it."""
    return Column("show_winning_list", String(8), nullable=False, server_default="hidden")


def queued_column() -> Column[bool]:
    """Whether draws are queued (domain `Activity.queued`), added by migration 0027:
    activities from before draw at once."""
    return Column("queued", Boolean, nullable=False, server_default=false())


def schedule_column() -> Column[str]:
    """A scheduled activity's schedule as JSON (domain `Schedule`; adapters/sql/schedules.py),
    added by migration 0026: NULL, an instant draw, as every activity before."""
    return Column("schedule", Text, nullable=True)


def define_activity(
    metadata: MetaData,
    *,
    caps: bool = True,
    join_code: bool | None = None,
    feed: bool = True,
    queued: bool = True,
    schedule: bool | None = None,
) -> Table:
    """Activities; as migration 0002 made them with `caps=False, feed=False, queued=False`
    (`join_code` follows `caps` unless given: as 0015 left them with `join_code=False`;
    `schedule` follows `feed`)."""
    schedule = feed if schedule is None else schedule
    join_code = caps if join_code is None else join_code
    return Table(
        "activity",
        metadata,
        Column("activity_id", BigInteger, primary_key=True, autoincrement=False),
        Column("name", String(64), nullable=False),
        Column("description", String(255), nullable=False),
        Column("strategy_id", BigInteger, nullable=False),
        Column("begin_at", UtcDateTime, nullable=False),
        Column("end_at", UtcDateTime, nullable=False),
        Column("time_zone", String(64), nullable=False),
        Column("state", String(16), nullable=False),
        Column("welcome_pack", BigInteger, nullable=True),
        *(caps_columns() if caps else []),
        *([join_code_column()] if join_code else []),
        *([feed_column()] if feed else []),
        *([queued_column()] if queued else []),
        *([schedule_column()] if schedule else []),
        Index(None, "strategy_id"),
        mysql_charset="utf8mb4",
    )


activity = define_activity(metadata)

quota_pack = Table(
    "quota_pack",
    metadata,
    Column("pack_id", BigInteger, primary_key=True, autoincrement=False),
    Column("total", Integer, nullable=False),
    Column("day", Integer, nullable=False),
    Column("month", Integer, nullable=False),
)

sku = Table(
    "sku",
    metadata,
    Column("sku", BigInteger, primary_key=True, autoincrement=False),
    Column("activity_id", BigInteger, nullable=False),
    Column("pack_id", BigInteger, nullable=False),
    Column("stock", Integer, nullable=False),
    Column("stock_left", Integer, nullable=False),  # taken with `stock_left > 0` as a guard
    Column("price_points", Integer, nullable=False),
    Index(None, "activity_id"),
)


def status_column() -> Column[str]:
    """An account's status (domain `UserStatus`); rows from before it are active."""
    return Column("status", String(16), nullable=False, server_default="active")


def session_ended_column() -> Column[datetime]:
    """When an operator ended the session (a lock, a new password), added by migration 0017:
    its row stays until it would have expired, so its token is told `session_ended`."""
    return Column("ended_at", UtcDateTime, nullable=True)


def define_users(
    metadata: MetaData, *, status: bool = True, ended: bool | None = None
) -> tuple[Table, Table]:
    """The accounts and their sessions; as migration 0002 made them with `status=False`
    (0009 adds the account's status and the index of sessions by user)."""
    accounts = Table(
        "user_account",
        metadata,
        Column("user_id", String(32), primary_key=True),
        Column("password_hash", String(255), nullable=False),
        Column("is_admin", Boolean, nullable=False),
        Column("created_at", UtcDateTime, nullable=False),
        *([status_column()] if status else []),
    )
    # Sessions of the embedded default (Redis holds them in production). Only a hash of the
    # token is stored: a leaked table does not leak sessions. By user: a locked account's
    # sessions end at once.
    sessions = Table(
        "session",
        metadata,
        Column("token_hash", String(64), primary_key=True),
        Column("user_id", String(32), nullable=False),
        Column("is_admin", Boolean, nullable=False),
        Column("expires_at", UtcDateTime, nullable=False),
        Index(None, "expires_at"),
        *([Index(None, "user_id")] if status else []),
        *([session_ended_column()] if (status if ended is None else ended) else []),
    )
    return accounts, sessions


user_account, session = define_users(metadata)

# Every lock and unlock of an account: who, when and why (migration 0017).
account_status_change = Table(
    "account_status_change",
    metadata,
    Column("id", AutoId, primary_key=True, autoincrement=True),
    Column("user_id", String(32), nullable=False),
    Column("status", String(16), nullable=False),
    Column("reason", String(255), nullable=False),
    Column("changed_by", String(32), nullable=True),  # None: from the command line
    Column("changed_at", UtcDateTime, nullable=False),
    Index(None, "user_id", "id"),
    mysql_charset="utf8mb4",
)

# Idempotency-Key records: `status` NULL while the first request is still in flight.
idempotency = Table(
    "idempotency",
    metadata,
    Column("user_id", String(32), primary_key=True),
    Column("request_key", String(128), primary_key=True),
    Column("request_hash", String(64), nullable=False),
    Column("status", Integer, nullable=True),
    Column("body", Text, nullable=True),
    Column("created_at", UtcDateTime, nullable=False),
    Index(None, "created_at"),
)

# One row per unit of prize stock handed out: the primary key makes "awarded <= stock" a
# database constraint, whatever a cache in front of it believes.
stock_claim = Table(
    "stock_claim",
    metadata,
    Column("strategy_id", BigInteger, primary_key=True, autoincrement=False),
    Column("award_id", BigInteger, primary_key=True, autoincrement=False),
    Column("slot", Integer, primary_key=True, autoincrement=False),
    Column("order_id", String(32), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
)

# One row per slot of an activity's counted cap (domain `Cap`: winners, participants) handed
# out, held by the order of the draw that took it: as `stock_claim` for prize stock, the
# primary key makes "counted <= limit" a database constraint across every shard.
activity_cap_claim = Table(
    "activity_cap_claim",
    metadata,
    Column("activity_id", BigInteger, primary_key=True, autoincrement=False),
    Column("cap", Integer, primary_key=True, autoincrement=False),
    Column("slot", Integer, primary_key=True, autoincrement=False),
    Column("order_id", String(32), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
)

# Behaviour rebates of an activity (seed 001 `daily_behavior_rebate`): doing `behaviour`
# grants the chances of `sku`, `points`, or both; a disabled rule grants nothing.
rebate_rule = Table(
    "rebate_rule",
    metadata,
    Column("activity_id", BigInteger, primary_key=True, autoincrement=False),
    Column("behaviour", String(32), primary_key=True),
    Column("sku", BigInteger, nullable=True),
    Column("points", Integer, nullable=True),
    Column("description", String(128), nullable=False),
    Column("enabled", Boolean, nullable=False),
    mysql_charset="utf8mb4",
)

# One row, written first by every campaign load: its row lock makes loads take turns, so a
# load's checks (coupon stock against every stored strategy) read a configuration no other
# load is changing. `loads` counts the loads committed.
campaign_load = Table(
    "campaign_load",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("loads", BigInteger, nullable=False),
)

# Runtime switches an operator set (domain/switches.py); one not here has its default.
switch = Table(
    "switch",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", String(16), nullable=False),
)

# One row: every switch change moves `version` on, in its transaction. Processes poll it,
# and its row lock makes changes take turns, so each audit row's old value is exact.
switch_version = Table(
    "switch_version",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("version", BigInteger, nullable=False),
)

# Every change: who, when, old and new value, at which version.
switch_change = Table(
    "switch_change",
    metadata,
    Column("version", BigInteger, primary_key=True, autoincrement=False),
    Column("name", String(64), nullable=False),
    Column("old_value", String(16), nullable=False),
    Column("new_value", String(16), nullable=False),
    Column("actor", String(32), nullable=False),
    Column("changed_at", UtcDateTime, nullable=False),
)

# Decision trees (domain/route_trees.py), every saved version kept: the newest row of a name
# is the tree, a NULL document a deletion. The key makes two saves of one version impossible.
route_tree = Table(
    "route_tree",
    metadata,
    # Names compare as written on every database: MariaDB's default collation would make
    # "VIP" and "vip" one tree.
    Column(
        "name",
        String(64).with_variant(VARCHAR(64, collation="utf8mb4_bin"), "mysql", "mariadb"),
        primary_key=True,
    ),
    Column("version", BigInteger, primary_key=True, autoincrement=False),
    Column("document", Text, nullable=True),  # the tree as JSON (route_tree_documents.py)
    Column("saved_by", String(32), nullable=False),
    Column("saved_at", UtcDateTime, nullable=False),
    mysql_charset="utf8mb4",
)

# Uploaded prize images (domain `PrizeImage`), named by the SHA-256 of their stored bytes: in
# the configuration database, so every API process on every host serves them with nothing
# shared but the database, and backups hold them with the campaign that shows them.
prize_image = Table(
    "prize_image",
    metadata,
    Column("image_id", String(64), primary_key=True),
    Column("media_type", String(32), nullable=False),
    # BLOB on MariaDB stops at 64 KiB; MEDIUMBLOB holds 16 MiB, past the upload bound.
    Column("data", LargeBinary().with_variant(MEDIUMBLOB(), "mysql", "mariadb"), nullable=False),
    Column("width", Integer, nullable=False),
    Column("height", Integer, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
)
