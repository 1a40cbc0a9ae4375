"""The outbox relay's statements on PostgreSQL (postgres/statements): a claim is one
`UPDATE … RETURNING`, marking one statement over an array of ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from functools import cache

from sqlalchemy import Table

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.postgres.statements import PgStatements
from raffle.adapters.sql.repositories.outbox import SqlOutboxRepository
from raffle.adapters.sql.tables.draw_rows import naive
from raffle.adapters.sql.tables.shard import ShardTables
from raffle.domain.delivery import RETRY_STEPS, retry_delay
from raffle.domain.draws import OutboxMessage


@cache
def _claim_sql(t: Table, stale: bool) -> str:
    # $1: how many; new messages and failed ones whose backoff passed, the backoff's end
    # looked up by attempts in $2 (an array: [n] is the cut-off after n attempts, the last
    # one for every attempt beyond); or (stale) anything not published last touched before $2.
    due = (
        "state <> 'published' AND updated_at < $2"
        if stale
        else "state = 'create' OR (state = 'failed' "
        f"AND updated_at <= ($2::timestamp[])[LEAST(attempts, {RETRY_STEPS})])"
    )
    return (
        f"WITH c AS (SELECT message_id FROM {t.name} WHERE {due} "  # noqa: S608
        "ORDER BY updated_at LIMIT $1 FOR UPDATE SKIP LOCKED) "
        f"UPDATE {t.name} AS o SET state = 'sending', attempts = o.attempts + 1, "
        "updated_at = $3 FROM c WHERE o.message_id = c.message_id "
        "RETURNING o.message_id, o.topic, o.message_key, o.payload, o.created_at"
    )


@cache
def _mark_sql(t: Table) -> str:
    return (
        f"UPDATE {t.name} SET state = $2, updated_at = $3 "  # noqa: S608
        "WHERE message_id = ANY($1::varchar[]) AND state = 'sending'"
    )


class PgOutboxRepository(SqlOutboxRepository):
    def __init__(self, connection: SqlConnection, tables: ShardTables, sql: PgStatements):
        super().__init__(connection, tables)
        self._sql = sql

    async def claim(
        self, now: datetime, limit: int, stale_before: datetime | None = None
    ) -> list[OutboxMessage]:
        # Claimed and committed, a row reads `sending`: no other relay takes it (SKIP LOCKED
        # skips the rows being claimed), only the compensation job after its age.
        if stale_before is None:
            due: object = [naive(now - timedelta(seconds=retry_delay(n))) for n in _STEPS]
        else:
            due = naive(stale_before)
        rows = await self._sql.fetch(
            _claim_sql(self._table, stale_before is not None), limit, due, naive(now)
        )
        return [
            OutboxMessage(r[0], r[1], r[2], r[3], r[4].replace(tzinfo=UTC))
            for r in sorted(rows, key=lambda r: r[4])  # oldest first, as they were written
        ]

    async def mark(self, message_ids: Sequence[str], published: bool, now: datetime) -> None:
        state = "published" if published else "failed"
        await self._sql.execute(_mark_sql(self._table), list(message_ids), state, naive(now))


_STEPS = range(1, RETRY_STEPS + 1)
