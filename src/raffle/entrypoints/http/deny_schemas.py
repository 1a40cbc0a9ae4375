"""The HTTP shapes of deny lists and automatic blocking rules."""

from __future__ import annotations

from datetime import datetime

from pydantic import AwareDatetime, BaseModel, Field

from raffle.domain.blocking import MAX_MINUTES, MAX_THRESHOLD, BlockEvent, BlockRule, BlockSubject
from raffle.domain.deny import MAX_REASON, MAX_VALUE, DenyEntry, DenyKind, Evidence
from raffle.entrypoints.http.examples import examples_of
from raffle.service.deny_lists import NewEntry

MAX_IMPORT = 10_000  # entries in one import: a larger list is sent in parts
_AT = "2026-11-25T08:00:00Z"
DENY_IN = {"kind": "ip", "value": "203.0.113.0/24", "reason": "scripted sign-ups"}
EVIDENCE = {
    "rule_id": 1,
    "event": "refused_draw",
    "count": 31,
    "window_minutes": 1,
    "first_at": _AT,
    "last_at": "2026-11-25T08:00:40Z",
}
DENY_OUT = {
    "id": 7,
    "kind": "user",
    "value": "mallory",
    "reason": "automatic: more than 30 refused_draw in 1 min (rule 1)",
    "added_by": "rule 1",
    "added_at": "2026-11-25T08:00:40Z",
    "expires_at": "2026-11-25T09:00:40Z",
    "automatic": True,
    "evidence": EVIDENCE,
}
RULE_IN = {
    "event": "refused_draw",
    "subject": "user",
    "threshold": 30,
    "window_minutes": 1,
    "block_minutes": 60,
}
RULE_OUT = {**RULE_IN, "id": 1, "created_by": "root", "created_at": _AT}


class DenyEntryIn(BaseModel):
    model_config = examples_of(DENY_IN)

    kind: DenyKind
    value: str = Field(
        min_length=1,
        max_length=MAX_VALUE,
        description="A user id, a phone (read as profiles read it, kept in E.164), an IP "
        "address or CIDR range (IPv4 or IPv6), or a device serial.",
    )
    reason: str = Field(min_length=1, max_length=MAX_REASON)
    expires_at: AwareDatetime | None = Field(None, description="None: until lifted.")

    def new(self) -> NewEntry:
        return NewEntry(self.kind, self.value, self.reason, self.expires_at)


class DenyImportIn(BaseModel):
    model_config = examples_of({"entries": [DENY_IN]})

    entries: list[DenyEntryIn] = Field(min_length=1, max_length=MAX_IMPORT)


class DenyImportOut(BaseModel):
    model_config = examples_of({"added": 1})

    added: int


class EvidenceOut(BaseModel):
    """What an automatic entry was made for: the rule, the events it counted in its window,
    the first and last of them."""

    model_config = examples_of(EVIDENCE)

    rule_id: int
    event: str
    count: int
    window_minutes: int
    first_at: datetime
    last_at: datetime

    @classmethod
    def of(cls, evidence: Evidence) -> EvidenceOut:
        return cls(
            rule_id=evidence.rule_id,
            event=evidence.event,
            count=evidence.count,
            window_minutes=evidence.window_minutes,
            first_at=evidence.first_at,
            last_at=evidence.last_at,
        )


class DenyEntryOut(BaseModel):
    model_config = examples_of(DENY_OUT)

    id: int
    kind: DenyKind
    value: str
    reason: str
    added_by: str
    added_at: datetime
    expires_at: datetime | None
    automatic: bool
    evidence: EvidenceOut | None

    @classmethod
    def of(cls, entry: DenyEntry) -> DenyEntryOut:
        evidence = EvidenceOut.of(entry.evidence) if entry.evidence else None
        return cls(
            id=entry.id,
            kind=entry.kind,
            value=entry.value,
            reason=entry.reason,
            added_by=entry.added_by,
            added_at=entry.added_at,
            expires_at=entry.expires_at,
            automatic=evidence is not None,
            evidence=evidence,
        )


class DenyPageOut(BaseModel):
    model_config = examples_of({"entries": [DENY_OUT], "next": "7"})

    entries: list[DenyEntryOut]
    next: str | None = Field(description="The cursor of the next page (`after`), if any.")


class BlockRuleIn(BaseModel):
    model_config = examples_of(RULE_IN)

    event: BlockEvent
    subject: BlockSubject
    threshold: int = Field(ge=1, le=MAX_THRESHOLD, description="Denied past this many.")
    window_minutes: int = Field(ge=1, le=MAX_MINUTES)
    block_minutes: int = Field(ge=1, le=MAX_MINUTES, description="How long the entry lasts.")


class BlockRuleOut(BlockRuleIn):
    model_config = examples_of(RULE_OUT)

    id: int
    created_by: str
    created_at: datetime

    @classmethod
    def of(cls, rule: BlockRule) -> BlockRuleOut:
        return cls(
            id=rule.id,
            event=rule.event,
            subject=rule.subject,
            threshold=rule.threshold,
            window_minutes=rule.window_minutes,
            block_minutes=rule.block_minutes,
            created_by=rule.created_by,
            created_at=rule.created_at,
        )


class RuleDeleted(BaseModel):
    model_config = examples_of({"rule_id": 1, "deleted": True})

    rule_id: int
    deleted: bool
