"""Operators' automatic blocking rules: listed, added, deleted."""

from __future__ import annotations

from raffle.domain.blocking import BlockEvent, BlockRule, BlockSubject, UnknownBlockRule
from raffle.service.deny_board import DenyBoard


async def add_rule(
    event: BlockEvent,
    subject: BlockSubject,
    *,
    threshold: int,
    window_minutes: int,
    block_minutes: int,
    actor: str,
    board: DenyBoard,
) -> BlockRule:
    """A new rule, counting in every process within a second."""
    rule = BlockRule(
        event, subject, threshold, window_minutes, block_minutes, actor, board.clock.now()
    )
    stored = await board.store.add_rule(rule)
    await board.changed()
    return stored


async def delete_rule(rule_id: int, board: DenyBoard) -> None:
    """The rule counts no more; the entries it made stay until lifted or expired."""
    if not await board.store.delete_rule(rule_id):
        raise UnknownBlockRule(f"no blocking rule {rule_id}")
    await board.changed()


def rules(board: DenyBoard) -> list[BlockRule]:
    return sorted(board.rules, key=lambda r: r.id)
