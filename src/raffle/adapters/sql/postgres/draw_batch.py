"""Draws in batches on PostgreSQL (service/draw_batch.py), its only draw path: each step ONE
statement over arrays for the whole batch, locking accounts in one order (by table, then
user); why, in docs/architecture.md. The statements are in postgres/draw_batch_sql.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.lanes import DrawLanes, by_table
from raffle.adapters.sql.postgres.draw_batch_sql import (
    REPLAY_AT,
    WELCOME_COLUMNS,
    announce_sql,
    consume_sql,
    give_back_sql,
    open_sql,
    record_sql,
    wins_sql,
)
from raffle.adapters.sql.postgres.lane import LaneConnections, LaneTransaction
from raffle.adapters.sql.postgres.participation_sql import (
    ADD_COLUMNS,
    BALANCE_COLUMNS,
    COUNTER_COLUMNS,
    DEBIT_COLUMNS,
    record_and_count_sql,
    standings_sql,
)
from raffle.adapters.sql.tables.draw_rows import (
    WIN_COLUMNS,
    WIN_READ_COLUMNS,
    aware,
    naive,
    order_of,
    order_values,
    outbox_values,
    win_of,
    win_values,
)
from raffle.domain.draws import OutboxMessage, RaffleOrder, Win
from raffle.domain.errors import Contention
from raffle.domain.points import PointsOrder
from raffle.domain.policies import Counts, Standing
from raffle.domain.quota import QuotaAccount, QuotaPack
from raffle.service.ports import Chance, Claim, Counting, Reading

# A new win's delivery error columns (WIN_READ_COLUMNS), the end of its row in its table.
_NO_ERROR = (None,) * (len(WIN_READ_COLUMNS) - len(WIN_COLUMNS))


class PgDrawBatch(LaneTransaction):
    def __init__(self, lane: LaneConnections, batches: PgDrawBatches) -> None:
        super().__init__(lane)
        self._batches = batches
        self._table = batches.table
        self._claims: Sequence[Claim] = ()
        self._taken: dict[int, tuple[bool, bool]] = {}  # by draw: its day, its month taken too
        # The counts of `count`, by shard table, sent with the records.
        # (its tables, whether it adds to counters, whether it debits points, its arrays)
        self._counted: tuple[tuple[int, ...], bool, bool, list[list[Any]]] | None = None

    async def consume(
        self, claims: Sequence[Claim], reads: Mapping[int, Reading] | None = None
    ) -> list[Chance]:
        # Participation's reads wait for standings, a statement of their own (its docstring).
        if len({claim[0] for claim in claims}) != len(claims):
            raise ValueError("a batch holds one draw per user")
        self._batches.sizes[len(claims)] += 1
        self._claims, self._taken, self._counted = claims, {}, None
        # In the order every batch locks rows in: the lookups run in the order of the arrays.
        tables = by_table(claims, self._table, range(len(claims)))
        args = [[(*claims[n], n) for n in draws] for draws in tables.values()]
        rows = await self.raw.fetch(consume_sql(tuple(tables)), *args)
        chances = dict(self._chance(row) for row in rows)
        return [chances[n] for n in range(len(claims))]

    def _chance(self, row: Any) -> tuple[int, Chance]:
        n = row["n"]
        total, day_left, month_left = row["total"], row["day_left"], row["month_left"]
        if total is not None:
            self._taken[n] = (day_left is not None, month_left is not None)
        account = None
        if total is not None and day_left is not None and month_left is not None:
            account = self._account(n, row)
        found = row[REPLAY_AT] is not None
        replay = order_of(row[REPLAY_AT:], aware) if found else None
        return n, Chance(account, row["opened"], replay)

    def _account(self, n: int, row: Any) -> QuotaAccount:
        user_id, activity_id, *_ = self._claims[n]
        return QuotaAccount(
            user_id, activity_id, row["total"], row["total_left"], row["per_day"],
            row["day_left"], row["per_month"], row["month_left"],
        )  # fmt: skip

    async def open_accounts(self, welcomes: Mapping[int, QuotaPack]) -> dict[int, QuotaAccount]:
        if any(pack.chances <= 0 for pack in welcomes.values()):
            raise ValueError("a welcome pack opened in a batch has a chance in every limit")
        tables = by_table(self._claims, self._table, welcomes)
        args: list[list[Any]] = []
        for draws in tables.values():
            args += _arrays(len(WELCOME_COLUMNS), (self._welcome(n, welcomes[n]) for n in draws))
        rows = await self.raw.fetch(open_sql(tuple(tables)), *args)
        self._taken.update((row["n"], (True, True)) for row in rows)
        return {row["n"]: self._account(row["n"], row) for row in rows}

    def _welcome(self, n: int, pack: QuotaPack) -> tuple[Any, ...]:
        user_id, activity_id, day, month, _ = self._claims[n]
        return user_id, activity_id, day, month, pack.total, pack.day, pack.month, n

    async def wins(self, orders: Sequence[RaffleOrder]) -> dict[str, Win]:
        tables: dict[int, list[str]] = {}
        for order in orders:
            tables.setdefault(self._table(order.user_id), []).append(order.order_id)
        ordered = sorted(tables.items())
        rows = await self.raw.fetch(
            wins_sql(tuple(t for t, _ in ordered)), *(o for _, o in ordered)
        )
        return {row["order_id"]: win_of(row, aware) for row in rows}

    async def give_back(self, draws: Collection[int]) -> None:
        # Rare (a replay, the day's or month's limit reached, the stock out of reach): a
        # statement per draw, sent together (executemany), by primary key.
        taken = (n for n in draws if n in self._taken)
        for table, back in by_table(self._claims, self._table, taken).items():
            rows = [(*self._claims[n][:4], *self._taken.pop(n)) for n in back]
            await self.raw.executemany(give_back_sql(table), rows)

    async def standings(self, reads: Mapping[int, Reading]) -> dict[int, Standing]:
        tables = by_table(self._claims, self._table, reads)
        counters = any(read.counters for read in reads.values())
        balance = any(read.balance for read in reads.values())
        args: list[list[Any]] = []
        for draws in tables.values():
            if counters:
                rows = ((n, *self._claims[n][:2], c) for n in draws for c in reads[n].counters)
                args += _arrays(len(COUNTER_COLUMNS), rows)
            if balance:
                users = ((n, self._claims[n][0]) for n in draws if reads[n].balance)
                args += _arrays(len(BALANCE_COLUMNS), users)
        counts: dict[int, dict[str, Counts]] = {n: {} for n in reads}
        balances: dict[int, int] = {}
        sql = standings_sql(tuple(tables), counters, balance)
        for n, counter, count, wins in await self.raw.fetch(sql, *args):
            if counter is None:
                balances[n] = count
            else:
                counts[n][counter] = (count, wins)
        return {n: Standing(counts[n], balances.get(n, 0)) for n in reads}

    async def count(self, counts: Mapping[int, Counting]) -> None:
        # Sent with the records (record_and_count_sql): one round trip for both.
        tables = by_table(self._claims, self._table, counts)
        counters = any(counted.counters for counted in counts.values())
        debits = any(counted.debit is not None for counted in counts.values())
        args: list[list[Any]] = []
        for draws in tables.values():
            if counters:
                added = (
                    (*self._claims[n][:2], c, *more)
                    for n in draws
                    for c, more in counts[n].counters.items()
                )
                args += _arrays(len(ADD_COLUMNS), added)
            if debits:
                spent = (_debit(d) for n in draws if (d := counts[n].debit) is not None)
                args += _arrays(len(DEBIT_COLUMNS), spent)
        if counters or debits:
            self._counted = (tuple(tables), counters, debits, args)

    async def record(self, draws: Sequence[tuple[RaffleOrder, Win, OutboxMessage]]) -> None:
        tables: dict[int, list[tuple[RaffleOrder, Win, OutboxMessage]]] = {}
        for drawn in draws:
            tables.setdefault(self._table(drawn[0].user_id), []).append(drawn)
        if not tables:
            return
        args: list[list[Any]] = []
        for _, rows in sorted(tables.items()):
            args.append([order_values(o, naive) for o, _, _ in rows])
            args.append([win_values(w, naive) + _NO_ERROR for _, w, _ in rows])
            args.append([outbox_values(m, naive) for _, _, m in rows])
        recorded = tuple(sorted(tables))
        sql = record_sql(recorded)
        if self._counted is not None:
            counted, counters, debits, counts = self._counted
            sql = record_and_count_sql(recorded, counted, counters, debits)
            args, self._counted = args + counts, None
        try:
            await self.raw.execute(sql, *args)
        except asyncpg.UniqueViolationError as error:
            if "request_key" not in (error.constraint_name or ""):
                raise
            # A twin committed the key while this batch waited for its account's lock, after
            # the snapshot of consume's lookup: run again, the draw replays it.
            raise Contention("a draw with this Idempotency-Key was just recorded") from error

    async def announce(self, notices: Sequence[tuple[str, OutboxMessage]]) -> None:
        tables: dict[int, list[OutboxMessage]] = {}
        for user_id, message in notices:
            tables.setdefault(self._table(user_id), []).append(message)
        rows = [
            [outbox_values(m, naive) for m in messages] for _, messages in sorted(tables.items())
        ]
        await self.raw.execute(announce_sql(tuple(sorted(tables))), *rows)


class PgDrawBatches(DrawLanes[LaneConnections, PgDrawBatch]):
    """A lane per shard database, with its own connections (postgres/lane)."""

    def __init__(self, engines: Sequence[AsyncEngine], tables: int, size: int) -> None:
        super().__init__(engines, tables, size, LaneConnections, PgDrawBatch)


def _debit(order: PointsOrder) -> tuple[Any, ...]:
    return (
        order.order_id, order.user_id, order.amount, order.out_business_no, order.reason,
        naive(order.created_at),
    )  # fmt: skip


def _arrays(width: int, lines: Iterable[tuple[Any, ...]]) -> list[list[Any]]:
    """Rows as columns: one array parameter per column, empty ones too."""
    columns: list[list[Any]] = [[] for _ in range(width)]
    for line in lines:
        for column, value in zip(columns, line, strict=True):
            column.append(value)
    return columns
