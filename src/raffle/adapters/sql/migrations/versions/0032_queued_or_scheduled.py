"""An activity is queued or scheduled, not both (domain `QueuedAndScheduled`): a scheduled
activity stored as queued before the rule is stored unqueued, so it reads again.

Its draws were accepted with a ticket and each ticket refused `draws_at_set_time`: from now
on a draw is refused at once, and its entries are as they were. The downgrade leaves the
rows as they are (which were queued is not known any more, and nothing depended on it).

Revision ID: 0032
Revises: 0031
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0032"
down_revision: str | Sequence[str] | None = "0031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    activity = sa.table("activity", sa.column("queued", sa.Boolean), sa.column("schedule"))
    both = activity.c.schedule.is_not(None) & activity.c.queued.is_(True)
    op.get_bind().execute(sa.update(activity).where(both).values(queued=False))


def downgrade() -> None:
    pass
