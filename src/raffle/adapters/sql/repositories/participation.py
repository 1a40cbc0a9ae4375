"""Participation in SQL: the activities' policies and caps, and the users' counters."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import cache
from typing import Any

from sqlalchemy import Dialect, Insert, Row, Select, Table, bindparam, delete, insert, select

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import upsert
from raffle.adapters.sql.tables.participation import participation_policy, person_cap
from raffle.domain.policies import Counts, Limit, Participation, Period, PersonCaps, Policy


class SqlParticipationRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def get(self, activity_id: int) -> Participation:
        p, c = participation_policy, person_cap
        rows = await self._connection.execute(select(p).where(p.c.activity_id == activity_id))
        policies = tuple(_policy(row) for row in rows)
        caps = await self._connection.execute(select(c).where(c.c.activity_id == activity_id))
        found = caps.first()
        return Participation(activity_id, policies, PersonCaps() if found is None else _caps(found))

    async def save(self, participation: Participation) -> None:
        """Replace the activity's policies and caps with these."""
        p, activity_id = participation_policy, participation.activity_id
        await self._connection.execute(delete(p).where(p.c.activity_id == activity_id))
        if participation.policies:
            rows = [_policy_row(activity_id, policy) for policy in participation.policies]
            await self._connection.execute(insert(p), rows)
        caps = participation.caps
        row = {
            "activity_id": activity_id,
            "wins_limit": caps.wins.count if caps.wins else None,
            "wins_period": caps.wins.period.value if caps.wins else None,
            "once_per_prize": caps.once_per_prize,
        }
        await self._connection.execute(upsert(self._connection.dialect, person_cap, row))


def _policy_row(activity_id: int, policy: Policy) -> dict[str, Any]:
    return {
        "activity_id": activity_id,
        "policy_id": policy.policy_id,
        "priority": policy.priority,
        "tag": policy.tag,
        "levels": ",".join(str(level) for level in sorted(policy.levels)),
        "points_cost": policy.points_cost,
        "joins_limit": policy.joins.count if policy.joins else None,
        "joins_period": policy.joins.period.value if policy.joins else None,
        "wins_limit": policy.wins.count if policy.wins else None,
        "wins_period": policy.wins.period.value if policy.wins else None,
    }


def _limit(count: int | None, period: str | None) -> Limit | None:
    return None if count is None else Limit(count, Period(period or Period.PERMANENT))


def _policy(row: Row[Any]) -> Policy:
    return Policy(
        policy_id=row.policy_id,
        priority=row.priority,
        tag=row.tag,
        levels=frozenset(int(level) for level in row.levels.split(",") if level),
        points_cost=row.points_cost,
        joins=_limit(row.joins_limit, row.joins_period),
        wins=_limit(row.wins_limit, row.wins_period),
    )


def _caps(row: Row[Any]) -> PersonCaps:
    return PersonCaps(_limit(row.wins_limit, row.wins_period), bool(row.once_per_prize))


class SqlCounterRepository:
    """A shard's counter rows of joins and wins, by user, activity and counter name."""

    def __init__(self, connection: SqlConnection, table: Any) -> None:
        self._connection = connection
        self._table = table

    async def counts(
        self, user_id: str, activity_id: int, counters: Collection[str]
    ) -> dict[str, Counts]:
        found = await self._connection.execute(
            _counts(self._table), {"u": user_id, "a": activity_id, "c": list(counters)}
        )
        return {row.counter: (row.n, row.wins) for row in found}

    async def add(self, user_id: str, activity_id: int, counters: Mapping[str, Counts]) -> None:
        """Add to each counter row of `counters` its joins and wins, in one executemany."""
        rows = [{"u": user_id, "a": activity_id, "c": c, "j": joins, "w": wins}
                for c, (joins, wins) in sorted(counters.items())]  # fmt: skip
        if rows:
            await self._connection.execute(_add(self._connection.dialect, self._table), rows)


# A draw's statements made once per table (and dialect), bound at each execution: made
# anew, SQLAlchemy's constructs cost a draw more than the database's work.
@cache
def _counts(t: Table) -> Select[Any]:
    return select(t.c.counter, t.c.n, t.c.wins).where(
        t.c.user_id == bindparam("u"),
        t.c.activity_id == bindparam("a"),
        t.c.counter.in_(bindparam("c", expanding=True)),
    )


@cache
def _add(dialect: Dialect, t: Table) -> Insert:
    names = {"user_id": "u", "activity_id": "a", "counter": "c", "n": "j", "wins": "w"}
    row: dict[str, Any] = {column: bindparam(name) for column, name in names.items()}
    added = {"n": t.c.n + bindparam("j"), "wins": t.c.wins + bindparam("w")}
    return upsert(dialect, t, row, computed=added)
