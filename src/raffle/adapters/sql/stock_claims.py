"""Stock claims: one row per unit of prize stock handed out, the truth behind the Redis gate.

The primary key (strategy, award, slot) with slots numbered 1..stock makes "awarded <= stock"
a database constraint: a second claim of a slot is refused, whatever a cache believes. An
activity's caps (winners, participants) are counted the same way in a table of their own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Column, Insert, Table, and_, delete, func, or_, select
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.postgres.lane import LaneConnections
from raffle.adapters.sql.tables.config import activity_cap_claim, stock_claim
from raffle.service.group_commit import GroupCommit

ORDER_ID_LENGTH = 32  # the column's; checked before an INSERT IGNORE could truncate silently


@dataclass(frozen=True, slots=True)
class Claimed:
    """The claims of one prize as a counter resumes from them."""

    top: int  # the highest claimed slot
    free: tuple[int, ...]  # the unclaimed slots below it, ascending


@dataclass(frozen=True, slots=True)
class ClaimTable:
    """A table of slot claims: a `scope` owns counters (a strategy), an `item` is one of
    them (a prize); then slot, order_id and created_at."""

    table: Table
    scope: str
    item: str

    def columns(self) -> tuple[Column[int], Column[int]]:
        return self.table.c[self.scope], self.table.c[self.item]


PRIZES = ClaimTable(stock_claim, "strategy_id", "award_id")
CAPS = ClaimTable(activity_cap_claim, "activity_id", "cap")  # an activity's caps (domain Cap)


def _insert_or_ignore(dialect: Dialect, table: Table, row: dict[str, object]) -> Insert:
    """An INSERT that does nothing (affecting no row) when the primary key is taken.

    Without raising: on PostgreSQL a failed INSERT would abort the whole transaction.
    """
    if dialect.name in ("mysql", "mariadb"):
        return mysql.insert(table).values(row).prefix_with("IGNORE")
    if dialect.name == "postgresql":
        return postgresql.insert(table).values(row).on_conflict_do_nothing()
    if dialect.name == "sqlite":
        return sqlite.insert(table).values(row).on_conflict_do_nothing()
    raise NotImplementedError(f"no insert-or-ignore for the {dialect.name} dialect")


# Claims on asyncpg directly: one prepared statement, in autocommit (no BEGIN and COMMIT),
# none of SQLAlchemy's per-statement work (building the INSERT, its cache key, the greenlet
# bridge): about a third of a claim's CPU. The claims made while one is in flight go
# together (group commit: a batch of draws takes its stock all at once), as arrays; the
# rows that went in come back. The arrays reach `unnest` through a subquery the planner
# keeps (OFFSET 0), which hides their lengths: the generic plan is then chosen, instead of
# planning anew at every claim (see postgres/draw_batch_sql._unnest). Our own names only; values
# are parameters.
def _pg_claims(claims: ClaimTable) -> str:
    scope, item = claims.scope, claims.item
    return (
        f"INSERT INTO {claims.table.name} ({scope}, {item}, slot, order_id, created_at) "  # noqa: S608
        "SELECT x.* FROM (SELECT $1::bigint[], $2::bigint[], $3::int[], $4::varchar[], "
        "$5::timestamp[] OFFSET 0) AS p(a0, a1, a2, a3, a4), unnest(p.a0, p.a1, p.a2, p.a3, "
        f"p.a4) AS x ON CONFLICT DO NOTHING RETURNING {scope}, {item}, slot, order_id"
    )


SlotClaim = tuple[int, int, int, str, datetime]  # strategy, award, slot, order id, naive UTC time


def _naive(at: datetime) -> datetime:
    return at.astimezone(UTC).replace(tzinfo=None)  # as UtcDateTime stores it


class SqlStockClaims:
    """Claims in the configuration database, each write in a short transaction of its own;
    of prize stock, or of what `claims` names."""

    def __init__(self, engine: AsyncEngine, claims: ClaimTable = PRIZES) -> None:
        self._engine = engine
        self._table = claims.table
        self._scope, self._item = claims.columns()
        self._pg_claims = _pg_claims(claims)
        # On PostgreSQL (always asyncpg) a claim is one statement in autocommit (no BEGIN and
        # COMMIT), on a connection kept open between claims, outside SQLAlchemy's pool (no
        # checkout and reset each).
        self._raw = LaneConnections(engine) if engine.dialect.driver == "asyncpg" else None
        # One claim of a slot per batch: a second (after Redis lost its data) goes next.
        self._batches = GroupCommit(self._claim_asyncpg, size=256, key=lambda c: c[:3])

    async def claim(
        self, strategy_id: int, award_id: int, slot: int, order_id: str, at: datetime
    ) -> bool:
        """Record that `order_id` holds `slot`; False if the slot is held already."""
        if len(order_id) > ORDER_ID_LENGTH:
            raise ValueError(f"order id longer than {ORDER_ID_LENGTH} characters: {order_id!r}")
        if self._raw is not None:
            return await self._batches.submit((strategy_id, award_id, slot, order_id, _naive(at)))
        row: dict[str, object] = {
            self._scope.name: strategy_id,
            self._item.name: award_id,
            "slot": slot,
            "order_id": order_id,
            "created_at": at,
        }
        async with self._engine.begin() as connection:
            result = await connection.execute(
                _insert_or_ignore(connection.dialect, self._table, row)
            )
        return result.rowcount == 1

    async def _claim_asyncpg(self, claims: Sequence[SlotClaim]) -> list[bool]:
        assert self._raw is not None, "claims on asyncpg only"
        columns = [list(column) for column in zip(*claims, strict=True)]
        connection = await self._raw.acquire()
        done = False
        try:
            rows = await connection.fetch(self._pg_claims, *columns)
            done = True
        finally:  # a statement cut short or failed: the connection goes, to be safe
            await self._raw.release(connection, reusable=done)
        made = {tuple(row) for row in rows}
        return [claim[:4] in made for claim in claims]

    async def release(self, strategy_id: int, award_id: int, order_id: str) -> list[int]:
        """Delete the order's claims of the prize; the slots this call freed.

        A slot is reported by one caller only, however many release it at once: what frees
        it is the DELETE that found the row.
        """
        c = self._table.c
        prize = and_(self._scope == strategy_id, self._item == award_id)
        freed: list[int] = []
        async with self._engine.begin() as connection:
            found = await connection.execute(select(c.slot).where(prize, c.order_id == order_id))
            for slot in found.scalars().all():
                deleted = await connection.execute(
                    delete(self._table).where(prize, c.slot == slot, c.order_id == order_id)
                )
                if deleted.rowcount == 1:
                    freed.append(slot)
        return freed

    async def counts(self, strategy_id: int) -> dict[int, int]:
        """Claims per award of the strategy (awards without any are absent)."""
        query = (
            select(self._item, func.count()).where(self._scope == strategy_id).group_by(self._item)
        )
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
        return {int(award_id): int(count) for award_id, count in rows}

    async def claimed(self, strategy_id: int) -> dict[int, Claimed]:
        """Per award of the strategy with claims, its highest claimed slot and the unclaimed
        ones below it, found as the gaps between consecutive claimed slots (usually few, so
        only the gaps come back). One statement, so one snapshot: read apart, a claim landing
        in between could show a slot as both above the top and in a gap."""
        slot, award = self._table.c.slot, self._item
        # LAG without its default argument, which MariaDB lacks; the first slot's is NULL.
        previous = func.coalesce(func.lag(slot).over(partition_by=award, order_by=slot), 0)
        ranked = (
            select(
                award,
                slot,
                previous.label("previous"),
                func.max(slot).over(partition_by=award).label("top"),
            )
            .where(self._scope == strategy_id)
            .subquery()
        )
        query = select(
            ranked.c[self._item.name], ranked.c.previous, ranked.c.slot, ranked.c.top
        ).where(or_(ranked.c.slot > ranked.c.previous + 1, ranked.c.slot == ranked.c.top))
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
        tops: dict[int, int] = {}
        free: defaultdict[int, list[int]] = defaultdict(list)
        for award_id, below, above, top in rows:
            tops[int(award_id)] = int(top)
            free[int(award_id)].extend(range(int(below) + 1, int(above)))
        return {a: Claimed(top, tuple(sorted(free[a]))) for a, top in tops.items()}

    async def older(self, strategy_id: int, award_id: int, before: datetime) -> list[str]:
        """The orders holding a claim of the prize made before `before`."""
        c = self._table.c
        query = select(c.order_id).where(
            self._scope == strategy_id, self._item == award_id, c.created_at < before
        )
        async with self._engine.connect() as connection:
            return list((await connection.execute(query)).scalars().all())
