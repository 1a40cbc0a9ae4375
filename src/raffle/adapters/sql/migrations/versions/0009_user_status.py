"""An account's status (active or locked), and the sessions' index by user, so that locking
an account ends its sessions at once.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from raffle.adapters.sql.tables.config import status_column

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SESSIONS_BY_USER = "ix_session_user_id"  # the name the naming convention gives it


def upgrade() -> None:
    op.add_column("user_account", status_column())
    op.create_index(SESSIONS_BY_USER, "session", ["user_id"])


def downgrade() -> None:
    op.drop_index(SESSIONS_BY_USER, table_name="session")
    op.drop_column("user_account", "status")
