"""Draws in batches on MariaDB (see service/draw_batch.py): each step a few multi-row
statements for the whole batch, one per shard table of the database its users live in.

MariaDB has no UPDATE ... RETURNING: taking the chances reads the accounts with their day and
month rows, locked (SELECT ... FOR UPDATE), and decides in Python which draws have a chance in
all three limits. The writes wait for the commit, which sends them with the orders, wins and
outbox messages, and COMMIT, in one round trip (mariadb/lane): the rows are locked from the
read on, and a chance given back is one never written. Every batch locks its accounts in one
order (by table, then by user): two processes' batches on one database wait for each other
instead of deadlocking (and a deadlock's victim fails, and its draws run alone). The
statements are in mariadb/draw_batch_sql.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.sql.lanes import DrawLanes, by_table
from raffle.adapters.sql.mariadb.draw_batch_sql import (
    REPLAY_AT,
    announce_sql,
    consume_sql,
    open_sql,
    record_sql,
    take_sql,
    wins_sql,
)
from raffle.adapters.sql.mariadb.lane import LaneConnections, LaneTransaction, Statement
from raffle.adapters.sql.mariadb.participation_sql import (
    add_sql,
    balances_sql,
    counters_sql,
    debit_sql,
)
from raffle.adapters.sql.tables.draw_rows import (
    aware,
    naive,
    order_of,
    order_values,
    outbox_values,
    win_of,
    win_values,
)
from raffle.domain.draws import OutboxMessage, RaffleOrder, Win
from raffle.domain.policies import Counts, Standing
from raffle.domain.quota import QuotaAccount, QuotaPack
from raffle.service.ports import Chance, Claim, Counting, Reading

Drawn = tuple[RaffleOrder, Win, OutboxMessage]


class MariaDrawBatch(LaneTransaction):
    def __init__(self, lane: LaneConnections, batches: MariaDrawBatches) -> None:
        super().__init__(lane)
        self._batches = batches
        self._table = batches.table
        self._claims: Sequence[Claim] = ()
        # By draw that has its chance: what its day and month rows hold after it (written
        # at the commit).
        self._taken: dict[int, tuple[int, int]] = {}
        self._drawn: list[Drawn] = []
        self._counted: list[Statement] = []  # participation's counts, sent at the commit
        self._notices: list[tuple[str, OutboxMessage]] = []  # sent at the commit too
        # Participation's reads sent with consume's statements, by draw (see consume).
        self._read: dict[int, Standing] = {}

    async def consume(
        self, claims: Sequence[Claim], reads: Mapping[int, Reading] | None = None
    ) -> list[Chance]:
        """As DrawBatch.consume; participation's `reads` go in the same round trip, after
        the statements that lock the accounts (each statement reads what was committed when
        it began: the counters of every draw committed before)."""
        if len({claim[0] for claim in claims}) != len(claims):
            raise ValueError("a batch holds one draw per user")
        self._batches.sizes[len(claims)] += 1
        self._claims, self._taken, self._drawn, self._counted = claims, {}, [], []
        statements: list[Statement] = [
            (consume_sql(index, len(draws)), [v for n in draws for v in (n, *claims[n])])
            for index, draws in by_table(claims, self._table, range(len(claims))).items()
        ]
        taking = len(statements)
        statements += self._reads(reads or {})
        found = await self.send(statements)
        chances = dict(self._chance(row) for rows in found[:taking] for row in rows)
        self._read = _standings(reads or {}, found[taking:])
        return [chances[n] for n in range(len(claims))]

    def _chance(self, row: Sequence[Any]) -> tuple[int, Chance]:
        n, total, total_left, per_day, per_month, day_left, month_left = row[:REPLAY_AT]
        replay = order_of(row[REPLAY_AT:], aware) if row[REPLAY_AT] is not None else None
        if total is None:
            return n, Chance(None, False, replay)
        # A day (month) with no row yet has its whole allowance left.
        day = per_day if day_left is None else day_left
        month = per_month if month_left is None else month_left
        if min(total_left, day, month) <= 0:
            return n, Chance(None, True, replay)
        self._taken[n] = (day - 1, month - 1)
        account = self._account(n, total, total_left - 1, per_day, per_month)
        return n, Chance(account, True, replay)

    def _account(self, n: int, total: int, total_left: int, day: int, month: int) -> QuotaAccount:
        user_id, activity_id, *_ = self._claims[n]
        day_left, month_left = self._taken[n]
        return QuotaAccount(
            user_id, activity_id, total, total_left, day, day_left, month, month_left
        )

    async def open_accounts(self, welcomes: Mapping[int, QuotaPack]) -> dict[int, QuotaAccount]:
        if any(pack.chances <= 0 for pack in welcomes.values()):
            raise ValueError("a welcome pack opened in a batch has a chance in every limit")
        tables = by_table(self._claims, self._table, welcomes)
        statements: list[Statement] = []
        for index, draws in tables.items():
            # Opened with the whole pack: the draw's chance is taken from it at the commit.
            values = [v for n in draws for v in (*self._claims[n][:2], *_whole(welcomes[n]))]
            statements.append((open_sql(index, len(draws)), values))
        made = {row[0] for rows in await self.send(statements) for row in rows}
        opened: dict[int, QuotaAccount] = {}
        for n in (n for draws in tables.values() for n in draws):
            self._read.pop(n, None)  # read before its account was: read again
            if self._claims[n][0] in made:
                pack = welcomes[n]
                self._taken[n] = (pack.day - 1, pack.month - 1)
                opened[n] = self._account(n, pack.total, pack.total - 1, pack.day, pack.month)
        return opened

    async def wins(self, orders: Sequence[RaffleOrder]) -> dict[str, Win]:
        tables: dict[int, list[str]] = {}
        for order in orders:
            tables.setdefault(self._table(order.user_id), []).append(order.order_id)
        statements = [(wins_sql(index, len(ids)), ids) for index, ids in sorted(tables.items())]
        rows = [row for found in await self.send(statements) for row in found]
        return {row[0]: win_of(row, aware) for row in rows}

    async def give_back(self, draws: Collection[int]) -> None:
        for n in draws:
            self._taken.pop(n, None)

    async def standings(self, reads: Mapping[int, Reading]) -> dict[int, Standing]:
        # Read by consume, but for the first visits' (their accounts opened since).
        unread = {n: read for n, read in reads.items() if n not in self._read}
        statements = self._reads(unread)
        found = _standings(unread, await self.send(statements)) if statements else {}
        return {n: found[n] if n in found else self._read[n] for n in reads}

    def _reads(self, reads: Mapping[int, Reading]) -> list[Statement]:
        """The statements reading `reads`: counter rows, then points accounts (locked)."""
        statements: list[Statement] = []
        for index, draws in by_table(self._claims, self._table, reads).items():
            counters = [(n, *self._claims[n][:2], c) for n in draws for c in reads[n].counters]
            if counters:
                statements.append((counters_sql(index, len(counters)), _flat(counters)))
            users = [(n, self._claims[n][0]) for n in draws if reads[n].balance]
            if users:
                statements.append((balances_sql(index, len(users)), _flat(users)))
        return statements

    async def count(self, counts: Mapping[int, Counting]) -> None:
        for index, draws in by_table(self._claims, self._table, counts).items():
            added = [
                (*self._claims[n][:2], c, *more)
                for n in draws
                for c, more in counts[n].counters.items()
            ]
            if added:
                self._counted.append((add_sql(index, len(added)), _flat(added)))
            for debit in (d for n in draws if (d := counts[n].debit) is not None):
                order, spend = debit_sql(index)
                self._counted += [
                    (order, [debit.order_id, debit.user_id, debit.amount,
                             debit.out_business_no, debit.reason, naive(debit.created_at)]),
                    (spend, [debit.amount, debit.user_id, debit.amount]),
                ]  # fmt: skip

    async def record(self, draws: Sequence[Drawn]) -> None:
        self._drawn.extend(draws)

    async def announce(self, notices: Sequence[tuple[str, OutboxMessage]]) -> None:
        self._notices.extend(notices)

    async def commit(self) -> None:
        await self.finish([*self._takes(), *self._records(), *self._counted, *self._announced()])

    def _announced(self) -> Iterable[Statement]:
        tables: dict[int, list[OutboxMessage]] = {}
        for user_id, message in self._notices:
            tables.setdefault(self._table(user_id), []).append(message)
        for index, messages in sorted(tables.items()):
            yield (
                announce_sql(index, len(messages)),
                [v for m in messages for v in outbox_values(m, naive)],
            )

    def _takes(self) -> Iterable[Statement]:
        for index, draws in by_table(self._claims, self._table, self._taken).items():
            accounts, days, months = take_sql(index, len(draws))
            keys = [self._claims[n][:2] for n in draws]
            yield accounts, [v for key in keys for v in key]
            for sql, at, left in ((days, 2, 0), (months, 3, 1)):
                rows = (
                    (*self._claims[n][:2], self._claims[n][at], self._taken[n][left]) for n in draws
                )
                yield sql, [v for row in rows for v in row]

    def _records(self) -> Iterable[Statement]:
        tables: dict[int, list[Drawn]] = {}
        for drawn in self._drawn:
            tables.setdefault(self._table(drawn[0].user_id), []).append(drawn)
        for index, rows in sorted(tables.items()):
            orders, wins, outbox = record_sql(index, len(rows))
            yield orders, [v for o, _, _ in rows for v in order_values(o, naive)]
            yield wins, [v for _, w, _ in rows for v in win_values(w, naive)]
            yield outbox, [v for _, _, m in rows for v in outbox_values(m, naive)]


class MariaDrawBatches(DrawLanes[LaneConnections, MariaDrawBatch]):
    """A lane per shard database, with its own connections (mariadb/lane)."""

    def __init__(self, engines: Sequence[AsyncEngine], tables: int, size: int) -> None:
        super().__init__(engines, tables, size, LaneConnections, MariaDrawBatch)


def _standings(
    reads: Mapping[int, Reading], found: Sequence[tuple[Any, ...]]
) -> dict[int, Standing]:
    """The draws' standings from the rows of `_reads`' statements."""
    counts: dict[int, dict[str, Counts]] = {n: {} for n in reads}
    balances: dict[int, int] = {}
    for rows in found:
        for row in rows:
            if len(row) == 4:
                counts[row[0]][row[1]] = (row[2], row[3])
            else:
                balances[row[0]] = row[1]
    return {n: Standing(counts[n], balances.get(n, 0)) for n in reads}


def _flat(rows: Iterable[tuple[Any, ...]]) -> list[Any]:
    return [value for row in rows for value in row]


def _whole(pack: QuotaPack) -> tuple[int, int, int, int]:
    """An account's total, total left, day and month allowances: the pack, untouched."""
    return pack.total, pack.total, pack.day, pack.month
