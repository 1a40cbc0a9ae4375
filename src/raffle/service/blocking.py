"""Automatic blocking: events counted per rule and subject, and past a threshold, an entry."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from raffle.domain.blocking import BlockEvent, BlockRule, BlockSubject
from raffle.domain.deny import DenyEntry, Evidence, InvalidDenyEntry, checked_value
from raffle.service.deny_board import DenyBoard
from raffle.service.ports import RateLimiter


@dataclass(frozen=True, slots=True)
class Blocking:
    """Counts events in the rate limiter's windows (Redis shared by every process, or this
    process's memory): a window opens at a subject's first event and lasts the rule's
    `window_minutes`, so "more than N in M minutes" is counted per window, not sliding."""

    board: DenyBoard
    counter: RateLimiter

    async def noted(self, event: BlockEvent, *, user_id: str | None, ip: str | None) -> None:
        """Count one `event` of the user and the address under every rule of that event;
        a subject past a rule's threshold is denied, once a window."""
        for rule in self.board.rules:
            subject = user_id if rule.subject is BlockSubject.USER else ip
            if rule.event is event and subject is not None:
                await self._count(rule, subject)

    async def forget(self, rule_id: int, value: str) -> None:
        """Start a subject's count under a rule again (its automatic entry was lifted)."""
        subject = value.removesuffix("/32").removesuffix("/128")
        await self.counter.reset(_events(rule_id, subject))
        await self.counter.reset(_denied(rule_id, subject))

    async def _count(self, rule: BlockRule, subject: str) -> None:
        window = rule.window_minutes * 60
        left = await self.counter.hit(_events(rule.id, subject), rule.threshold, window)
        # Past the threshold, only the first event of the window denies: one entry a window.
        if not left or await self.counter.hit(_denied(rule.id, subject), 1, window):
            return
        try:
            value = checked_value(rule.subject.kind, subject)
        except InvalidDenyEntry:  # not an address (a test client's name): nothing to deny
            return
        now = self.board.clock.now()
        count = await self.counter.count(_events(rule.id, subject), window)
        first = now - timedelta(seconds=window - left)  # the window opened at the first
        evidence = Evidence(rule.id, rule.event, count, rule.window_minutes, first, now)
        expires = now + timedelta(minutes=rule.block_minutes)
        by = f"rule {rule.id}"
        entry = DenyEntry(rule.subject.kind, value, rule.reason, by, now, expires, evidence)
        await self.board.add(entry)


def _events(rule_id: int, subject: str) -> str:
    return f"block:{rule_id}:{subject}"


def _denied(rule_id: int, subject: str) -> str:
    return f"blocked:{rule_id}:{subject}"
