"""Draws in batches on PostgreSQL (see service/draw_batch.py): each step ONE statement for the
whole batch, over every shard table of the database that the batch's users live in.

Lists travel as arrays (`unnest`), so a statement's text depends only on the set of shard
tables in the batch: asyncpg prepares each once per connection. Taking the chances locks the
accounts in one order whatever the batch (by table, then by user: the arrays are sorted and
looked up in their order): two processes' batches on one database wait for each other
instead of deadlocking (and one that is picked as a deadlock's victim anyway, against a
delivery's credits say, fails, and its draws run alone). A batch holds one draw per user: no
row is written twice by one statement (which `ON CONFLICT DO UPDATE` refuses).

Only our own table and column names are put into the SQL; every value is a bind parameter
($1, $2, ...), hence the `noqa: S608`s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from functools import cache
from types import TracebackType
from typing import Any

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql import pg_draw
from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.draw_rows import (
    ORDER_COLUMNS,
    OUTBOX_COLUMNS,
    WIN_COLUMNS,
    order_of,
    order_values,
    outbox_values,
    win_values,
)
from raffle.adapters.sql.shard_tables import shard_tables
from raffle.adapters.sql.shards import route
from raffle.adapters.sql.transaction import TransactionScope
from raffle.domain.draws import OutboxMessage, RaffleOrder, Win
from raffle.domain.quota import QuotaAccount
from raffle.service.ports import Chance, Claim

_CLAIM = ("user_id", "activity_id", "day", "month", "request_key", "n")
_CLAIM_TYPES = ("varchar", "bigint", "varchar", "varchar", "varchar", "int")
REPLAY_AT = 8  # the first of the order's columns in a row of _consume_sql


class PgDrawBatches:
    """A lane per shard database."""

    def __init__(self, engines: Sequence[AsyncEngine], tables: int, size: int) -> None:
        self._engines = tuple(engines)
        self._tables = tables
        self.size = size
        self.sizes: Counter[int] = Counter()
        self.failed = 0

    def lane(self, user_id: str) -> int:
        return route(user_id, len(self._engines), self._tables)[0]

    def begin(self, lane: int) -> PgDrawBatch:
        return PgDrawBatch(self._engines[lane], self)

    def table(self, user_id: str) -> int:
        return route(user_id, len(self._engines), self._tables)[1]


def batches_for(engines: Sequence[AsyncEngine], tables: int, size: int) -> PgDrawBatches | None:
    """Batches of up to `size` draws where every database is PostgreSQL on asyncpg; else
    (or with `size` 1) None: each draw commits alone."""
    pg = all(e.dialect.name == "postgresql" and e.dialect.driver == "asyncpg" for e in engines)
    return PgDrawBatches(engines, tables, size) if pg and size > 1 else None


class PgDrawBatch(TransactionScope):
    def __init__(self, engine: AsyncEngine, batches: PgDrawBatches) -> None:
        super().__init__(engine)
        self._batches = batches
        self._table = batches.table
        self._driver: pg_draw.Driver | None = None
        self._claims: Sequence[Claim] = ()
        self._taken: dict[int, tuple[bool, bool]] = {}  # by draw: its day, its month taken too

    def _bind(self, connection: SqlConnection) -> None:
        if (pg := pg_draw.driver_for(connection)) is None:
            raise RuntimeError("draws in batches need PostgreSQL on asyncpg")
        self._driver = pg[1]

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._batches.failed += exc is not None
        await super().__aexit__(exc_type, exc, tb)

    async def _connection(self) -> Any:
        assert self._driver is not None, "the batch's transaction is not open"
        return await self._driver()

    def _by_table(self, draws: Iterable[int]) -> dict[int, list[int]]:
        """The draws by shard table, in the order every batch locks rows in: by table, and
        in a table by user (the lookups run in the order of the arrays)."""
        tables: dict[int, list[int]] = {}
        for n in sorted(draws, key=lambda n: self._claims[n][0]):
            tables.setdefault(self._table(self._claims[n][0]), []).append(n)
        return dict(sorted(tables.items()))

    async def consume(self, claims: Sequence[Claim]) -> list[Chance]:
        if len({claim[0] for claim in claims}) != len(claims):
            raise ValueError("a batch holds one draw per user")
        self._batches.sizes[len(claims)] += 1
        self._claims, self._taken = claims, {}
        tables = self._by_table(range(len(claims)))
        args: list[list[Any]] = []
        for draws in tables.values():
            args += _arrays(len(_CLAIM), ((*claims[n], n) for n in draws))
        rows = await (await self._connection()).fetch(_consume_sql(tuple(tables)), *args)
        chances = dict(self._chance(row) for row in rows)
        return [chances[n] for n in range(len(claims))]

    def _chance(self, row: Any) -> tuple[int, Chance]:
        n = row["n"]
        user_id, activity_id, *_ = self._claims[n]
        total, day_left, month_left = row["total"], row["day_left"], row["month_left"]
        if total is not None:
            self._taken[n] = (day_left is not None, month_left is not None)
        account = None
        if total is not None and day_left is not None and month_left is not None:
            account = QuotaAccount(
                user_id, activity_id, total, row["total_left"], row["per_day"], day_left,
                row["per_month"], month_left,
            )  # fmt: skip
        found = row[REPLAY_AT] is not None
        replay = order_of(row[REPLAY_AT:], pg_draw.aware) if found else None
        return n, Chance(account, row["opened"], replay)

    async def give_back(self, draws: Collection[int]) -> None:
        # Rare (a replay, the day's or month's limit reached, the stock out of reach): a
        # statement per draw, sent together (executemany), by primary key.
        for table, back in self._by_table(n for n in draws if n in self._taken).items():
            rows = [(*self._claims[n][:4], *self._taken.pop(n)) for n in back]
            await (await self._connection()).executemany(_give_back_sql(table), rows)

    async def record(self, draws: Sequence[tuple[RaffleOrder, Win, OutboxMessage]]) -> None:
        tables: dict[int, list[tuple[RaffleOrder, Win, OutboxMessage]]] = {}
        for drawn in draws:
            tables.setdefault(self._table(drawn[0].user_id), []).append(drawn)
        if not tables:
            return
        args: list[list[Any]] = []
        naive = pg_draw.naive
        for _, rows in sorted(tables.items()):
            args += _arrays(len(ORDER_COLUMNS), (order_values(o, naive) for o, _, _ in rows))
            args += _arrays(len(WIN_COLUMNS), (win_values(w, naive) for _, w, _ in rows))
            args += _arrays(len(OUTBOX_COLUMNS), (outbox_values(m, naive) for _, _, m in rows))
        await (await self._connection()).execute(_record_sql(tuple(sorted(tables))), *args)


def _arrays(width: int, lines: Iterable[tuple[Any, ...]]) -> list[list[Any]]:
    """Rows as columns: one array parameter per column, empty ones too."""
    columns: list[list[Any]] = [[] for _ in range(width)]
    for line in lines:
        for column, value in zip(columns, line, strict=True):
            column.append(value)
    return columns


_DIALECT = postgresql.dialect()  # type: ignore[no-untyped-call]


def _unnest(table: Table | None, columns: Sequence[str], first: int) -> str:
    """`unnest` of one typed array parameter per column, from `$first` on."""
    types = _CLAIM_TYPES if table is None else [_sql_type(table, c) for c in columns]
    arrays = ", ".join(f"${first + i}::{kind}[]" for i, kind in enumerate(types))
    return f"unnest({arrays}) AS x({', '.join(columns)})"


def _sql_type(table: Table, column: str) -> str:
    return str(table.c[column].type.compile(dialect=_DIALECT))


def _chained(statements: Sequence[str]) -> str:
    """Statements as one: all but the last as CTEs (each runs once, to completion)."""
    ctes = ", ".join(f"s{n} AS ({part})" for n, part in enumerate(statements[:-1]))
    return f"WITH {ctes} {statements[-1]}" if ctes else statements[-1]


def _same(*columns: str) -> str:
    return " AND ".join(f"q.{c} = x.{c}" for c in columns)


@cache
def _consume_sql(tables: tuple[int, ...]) -> str:
    """Per shard table: the claims (`x`); their accounts locked in order (`l`); the guarded
    UPDATE of each account's total (`a`); its day and month rows made by their first draw
    or taken from if they have any left (`d`, `m`: a row missing means that limit is
    exhausted, as in pg_draw); and a row per claim with the order of its Idempotency-Key.

    The lookups by key are LATERAL with LIMIT 1 (which keeps the planner from flattening
    them into joins): asyncpg's prepared statement soon runs a generic plan, made without
    the arrays' lengths and perhaps while the tables were small, which joined the orders
    by hashing a sequential scan of the whole table."""
    ctes, selects = [], []
    for k, index in enumerate(tables):
        t = shard_tables(index)
        account, key = t.quota_account.name, ("user_id", "activity_id")
        ctes += [
            f"x{k} AS (SELECT * FROM {_unnest(None, _CLAIM, 1 + k * len(_CLAIM))})",  # noqa: S608
            f"l{k} AS (SELECT q.user_id, q.activity_id FROM x{k} AS x, LATERAL "  # noqa: S608
            f"(SELECT user_id, activity_id FROM {account} AS q WHERE {_same(*key)} LIMIT 1) AS q "
            "FOR UPDATE OF q)",
            f"a{k} AS (UPDATE {account} AS q SET total_left = q.total_left - 1 FROM l{k} AS x "  # noqa: S608
            f"WHERE {_same(*key)} AND q.total_left > 0 "
            "RETURNING q.user_id, q.total, q.total_left, q.day, q.month)",
            f"d{k} AS ({_period_sql(t.quota_day, 'day', k)})",
            f"m{k} AS ({_period_sql(t.quota_month, 'month', k)})",
        ]
        found = ", ".join(f"o.{name}" for name in ORDER_COLUMNS)
        selects.append(
            "SELECT x.n, l.user_id IS NOT NULL AS opened, a.total, a.total_left, "  # noqa: S608
            "a.day AS per_day, a.month AS per_month, d.day_left, m.month_left, "
            f"{found} FROM x{k} AS x "
            f"LEFT JOIN l{k} AS l ON l.user_id = x.user_id "
            f"LEFT JOIN a{k} AS a ON a.user_id = x.user_id "
            f"LEFT JOIN d{k} AS d ON d.user_id = x.user_id "
            f"LEFT JOIN m{k} AS m ON m.user_id = x.user_id "
            f"LEFT JOIN LATERAL (SELECT * FROM {t.raffle_order.name} AS o "
            "WHERE o.user_id = x.user_id AND o.request_key = x.request_key LIMIT 1) AS o ON true"
        )
    return f"WITH {', '.join(ctes)} {' UNION ALL '.join(selects)}"


def _period_sql(table: Table, period: str, k: int) -> str:
    left = f"{period}_left"
    return (
        f"INSERT INTO {table.name} AS q (user_id, activity_id, {period}, {left}) "  # noqa: S608
        f"SELECT x.user_id, x.activity_id, x.{period}, a.{period} - 1 "
        f"FROM a{k} AS a JOIN x{k} AS x ON x.user_id = a.user_id WHERE a.{period} > 0 "
        f"ORDER BY x.user_id ON CONFLICT (user_id, activity_id, {period}) "
        f"DO UPDATE SET {left} = q.{left} - 1 WHERE q.{left} > 0 RETURNING q.user_id, q.{left}"
    )


@cache
def _give_back_sql(index: int) -> str:
    """One draw's chance back: its total, and its day and month where they were taken."""
    t = shard_tables(index)
    user = "user_id = $1 AND activity_id = $2"
    return (
        f"WITH a AS (UPDATE {t.quota_account.name} SET total_left = total_left + 1 "  # noqa: S608
        f"WHERE {user}), "
        f"d AS (UPDATE {t.quota_day.name} SET day_left = day_left + 1 "
        f"WHERE $5::boolean AND {user} AND day = $3) "
        f"UPDATE {t.quota_month.name} SET month_left = month_left + 1 "
        f"WHERE $6::boolean AND {user} AND month = $4"
    )


@cache
def _record_sql(tables: tuple[int, ...]) -> str:
    inserts, first = [], 1
    for index in tables:
        t = shard_tables(index)
        for table, columns in (
            (t.raffle_order, ORDER_COLUMNS),
            (t.award_record, WIN_COLUMNS),
            (t.outbox, OUTBOX_COLUMNS),
        ):
            inserts.append(
                f"INSERT INTO {table.name} ({', '.join(columns)}) "  # noqa: S608
                f"SELECT * FROM {_unnest(table, columns, first)}"
            )
            first += len(columns)
    return _chained(inserts)
