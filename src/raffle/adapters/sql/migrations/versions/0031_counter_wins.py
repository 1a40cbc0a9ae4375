"""A participation counter row counts joins and wins (`tables.participation.wins_column`): a
policy's joins and wins of one period share a row, read and written once a draw.

The rows are renamed: `p3:joins:2026-W48` becomes `p3:2026-W48` (its count the joins),
`p3:wins:2026-W48` that row's wins, `cap:wins:2026-11-24` the wins of `cap:2026-11-24`, and
a prize's mark `won:<award>` counts its wins in `wins`. The downgrade names them back.

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import context, op

from raffle.adapters.sql.tables.participation import wins_column

revision: str = "0031"
down_revision: str | Sequence[str] | None = "0030"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_KEY = ("user_id", "activity_id", "counter")


def _tables() -> Iterator[sa.TableClause]:
    for index in range(int(context.config.attributes.get("shard_tables", 1))):
        names = (*_KEY, "n", "wins")
        yield sa.table(f"participation_{index:03d}", *(sa.column(name) for name in names))


def upgrade() -> None:
    bind = op.get_bind()
    for t in _tables():
        op.add_column(t.name, wins_column())
        key = (t.c.user_id, t.c.activity_id, t.c.counter)
        won = t.c.counter.like("%:wins:%")  # a policy's wins, the caps' wins
        rows = bind.execute(sa.select(*key, t.c.n).where(won)).all()
        bind.execute(sa.delete(t).where(won))
        joins = t.c.counter.like("p%:joins:%")
        bind.execute(
            sa.update(t).where(joins).values(counter=sa.func.replace(t.c.counter, ":joins:", ":"))
        )
        # Two statements: MariaDB assigns left to right, in whatever order the SET comes.
        marks = t.c.counter.like("won:%")
        bind.execute(sa.update(t).where(marks).values(wins=t.c.n))
        bind.execute(sa.update(t).where(marks).values(n=0))
        for user_id, activity_id, counter, n in rows:
            row = (user_id, activity_id, counter.replace(":wins:", ":", 1))
            same = sa.and_(*(column == value for column, value in zip(key, row, strict=True)))
            if bind.execute(sa.update(t).where(same).values(wins=n)).rowcount == 0:
                made = {**dict(zip(_KEY, row, strict=True)), "n": 0, "wins": n}
                bind.execute(sa.insert(t).values(made))


def downgrade() -> None:
    bind = op.get_bind()
    for t in _tables():
        named = sa.or_(t.c.counter.like("p%"), t.c.counter.like("cap:%"))
        rows = bind.execute(sa.select(t.c.user_id, t.c.activity_id, t.c.counter, t.c.n, t.c.wins)
                            .where(named)).all()  # fmt: skip
        bind.execute(sa.delete(t).where(named))
        back = [row for found in rows for row in _named_back(*found)]
        if back:
            bind.execute(sa.insert(t), back)
        bind.execute(sa.update(t).where(t.c.counter.like("won:%")).values(n=t.c.wins))
        op.drop_column(t.name, "wins")


def _named_back(
    user_id: str, activity_id: int, counter: str, joins: int, wins: int
) -> Iterator[dict[str, Any]]:
    """A counter row as 0029's rows: a policy's joins and wins apart, the caps' wins."""
    owner, period = counter.split(":", 1)
    counts = (("joins", joins), ("wins", wins)) if owner != "cap" else (("wins", wins),)
    for what, n in counts:
        if n:
            yield {"user_id": user_id, "activity_id": activity_id,
                   "counter": f"{owner}:{what}:{period}", "n": n, "wins": 0}  # fmt: skip
