"""Stock notices from the draw: a crossed warning threshold (or zero) as an outbox message."""

# Written in the draw's own transaction; a crossing whose draw did not commit is written
# after it, if it still stands (domain/notices.py).

from __future__ import annotations

import json
import logging
from dataclasses import asdict
from datetime import datetime

from raffle.domain.draws import OutboxMessage
from raffle.domain.notices import NOTICE, StockNotice, crossed, still_crossed
from raffle.service import ids
from raffle.service.ports import Attempt

log = logging.getLogger(__name__)


def crossings(
    attempt: Attempt, award_id: int, order_id: str, left: int | None
) -> list[StockNotice]:
    """The notices of a take of `award_id` that left `left` units (None: no stock taken)."""
    if left is None:
        return []
    prize = attempt.engine.prize(award_id)
    if prize is None or prize.stock is None:
        return []
    return [
        StockNotice(
            kind,
            attempt.activity.id,
            attempt.activity.strategy_id,
            award_id,
            prize.stock,
            left,
            prize.warning_surplus,
            order_id,
        )
        for kind in crossed(prize, left)
    ]


def still_owed(attempt: Attempt, notices: list[StockNotice], left: int | None) -> list[StockNotice]:
    """Of the crossings of a draw that did not commit, those that stand once its unit was
    given back and the stock has `left` (None: nothing came back)."""
    prize = attempt.engine.prize(notices[0].award_id) if notices else None
    if prize is None:
        return []
    return [n for n in notices if still_crossed(prize, n.kind, left)]


def message(notice: StockNotice, now: datetime) -> OutboxMessage:
    """The notice as an outbox message; the key is the order whose take crossed."""
    body = {**asdict(notice), "at": now.isoformat()}
    return OutboxMessage(ids.message_id(), NOTICE, notice.order_id, json.dumps(body), now)


def logged(notice: OutboxMessage) -> None:
    """A notice that could not be written after its draw failed: the log keeps it."""
    log.warning("stock notice not written: %s", notice.payload)
