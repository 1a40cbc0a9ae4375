"""The draw's rows as plain tuples in column order, for the statements the backends send
straight to their drivers; each driver stores times its own way (`stamp` writes, `read` reads)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from raffle.domain.draws import DeliveryError, OrderState, OutboxMessage, RaffleOrder, Win, WinState

Stamp = Callable[[datetime], Any]
Read = Callable[[Any], datetime]

ORDER_COLUMNS = (
    "order_id",
    "user_id",
    "activity_id",
    "strategy_id",
    "draw_count",
    "state",
    "request_key",
    "created_at",
    "policy_id",
    "proof",
)
WIN_COLUMNS = (
    "order_id",
    "user_id",
    "activity_id",
    "strategy_id",
    "award_id",
    "points",
    "rule",
    "state",
    "created_at",
)
# What a record read back holds besides: why its last delivery attempt failed.
WIN_READ_COLUMNS = (*WIN_COLUMNS, "error_code", "error_message")
OUTBOX_COLUMNS = (
    "message_id",
    "topic",
    "message_key",
    "payload",
    "state",
    "attempts",
    "created_at",
    "updated_at",
)


def order_values(o: RaffleOrder, stamp: Stamp) -> tuple[Any, ...]:
    return (
        o.order_id,
        o.user_id,
        o.activity_id,
        o.strategy_id,
        o.draw_count,
        o.state.value,
        o.request_key,
        stamp(o.created_at),
        o.policy_id,
        o.proof,
    )


def win_values(w: Win, stamp: Stamp) -> tuple[Any, ...]:
    return (
        w.order_id,
        w.user_id,
        w.activity_id,
        w.strategy_id,
        w.award_id,
        w.points,
        w.rule,
        w.state.value,
        stamp(w.created_at),
    )


def outbox_values(m: OutboxMessage, stamp: Stamp) -> tuple[Any, ...]:
    at = stamp(m.created_at)
    return (m.message_id, m.topic, m.key, m.payload, "create", 0, at, at)


def order_of(row: Sequence[Any], read: Read) -> RaffleOrder:
    order_id, user_id, activity_id, strategy_id, draw_count, state, key, created_at = row[:8]
    return RaffleOrder(
        order_id,
        user_id,
        activity_id,
        strategy_id,
        draw_count,
        OrderState(state),
        read(created_at),
        key,
        row[8],
        row[9],
    )


def win_of(row: Sequence[Any], read: Read) -> Win:
    """A record from a row of `WIN_READ_COLUMNS`."""
    order_id, user_id, activity_id, strategy_id, award_id, points, rule, state, at = row[:9]
    code, message = row[9:]
    return Win(
        order_id,
        user_id,
        activity_id,
        strategy_id,
        award_id,
        points,
        rule,
        read(at),
        WinState(state),
        None if code is None else DeliveryError(code, message or ""),
    )


def naive(at: datetime) -> datetime:
    """A time as stored: naive UTC (the columns' UtcDateTime)."""
    return at.astimezone(UTC).replace(tzinfo=None)


def aware(at: datetime) -> datetime:
    """A stored naive UTC time, read back."""
    return at.replace(tzinfo=UTC)
