"""Verifiable draws on the wire: receipts, an activity's seeds, client seeds, verdicts."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, Field

from raffle.domain.fairness import CLIENT_SEED_LENGTH, ServerSeed
from raffle.domain.receipts import Receipt
from raffle.entrypoints.http.bounds import Id
from raffle.entrypoints.http.examples import WHEN, Example, examples_of
from raffle.entrypoints.http.scheduled_schemas import ScheduledOut
from raffle.service.fairness import Fairness
from raffle.service.receipts import Verdict

MAX_KNOWN = 1000  # prizes a trail may name
COMMITMENT = "9f2b5c0e6a1d4b7c8e3f0a2d5b6c9e1f4a7d0b3c6e9f2a5d8b1c4e7f0a3d6b9c"
TRAIL: Example = {"exhausted": [], "steps": []}
RECEIPT: Example = {
    "activity_id": 100301,
    "period": 3,
    "order_id": "0k9c2q1v7m3x8d4f",
    "nonce": 1,
    "client_seed": "lucky-7",
    "commitment": COMMITMENT,
    "odds_hash": "3c6e9f2a5d8b1c4e7f0a3d6b9c9f2b5c0e6a1d4b7c8e3f0a2d5b6c9e1f4a7d0b",
    "listed": False,
    "trail": TRAIL,
    "award_id": 105,
    "points": None,
    "rule": "default",
    "seals": {"award_id": "5d7286fa2f476284f364e2e861dc5c01"},
}
SEED: Example = {
    "period": 3,
    "commitment": COMMITMENT,
    "starts_at": WHEN,
    "ends_at": "2026-11-11T16:00:00Z",
    "seed": None,
}


class TrailOut(BaseModel):
    model_config = examples_of(TRAIL)

    exhausted: list[int] = Field(description="The prizes known to be out of stock as it began.")
    steps: list[list[Any]] = Field(
        description='Each later turn: ["cap", rule] or ["out", award, exhausted then].'
    )


class ReceiptOut(BaseModel):
    """Its fields in the order `Receipt.to_json` writes them (draw_json writes those)."""

    model_config = examples_of(RECEIPT)

    activity_id: int
    period: int
    order_id: str
    nonce: int = Field(description="The player's draw number in the activity.")
    client_seed: str
    commitment: str = Field(description="SHA-256 of the period's server seed, published ahead.")
    odds_hash: str = Field(description="SHA-256 of the published odds the draw was made at.")
    listed: bool
    trail: TrailOut
    award_id: int
    points: int | None
    rule: str
    seals: dict[str, str] = Field(
        description="An HMAC of each field under the server seed: after the reveal, what names "
        "a changed field."
    )

    @classmethod
    def of(cls, r: Receipt) -> ReceiptOut:
        return cls.model_validate(r.to_json())


Hex = Annotated[str, Field(max_length=64)]
Word = Annotated[str, Field(max_length=32)]
Known = Annotated[list[Id], Field(max_length=MAX_KNOWN)]
Count = Annotated[int, Field(ge=0, lt=2**31)]


class TrailIn(BaseModel):
    model_config = examples_of(TRAIL)

    exhausted: Known
    steps: list[Annotated[list[Word | Id | Known], Field(max_length=3)]] = Field(max_length=64)


class ReceiptIn(BaseModel):
    """A receipt to check, as a draw gave it."""

    model_config = examples_of(RECEIPT)

    activity_id: Id
    period: Count
    order_id: Hex
    nonce: Count
    client_seed: str = Field(max_length=CLIENT_SEED_LENGTH)
    commitment: Hex
    odds_hash: Hex
    listed: bool
    trail: TrailIn
    award_id: Id
    points: Count | None
    rule: Word
    seals: dict[Word, Hex] = Field(max_length=16)

    def receipt(self) -> Receipt:
        return Receipt.from_json(self.model_dump())


class SeedOut(BaseModel):
    model_config = examples_of(SEED)

    period: int
    commitment: str
    starts_at: datetime
    ends_at: datetime
    seed: str | None = Field(description="The seed in hex once its period is over; else null.")

    @classmethod
    def of(cls, s: ServerSeed, now: datetime) -> SeedOut:
        shown = s.secret.hex() if s.revealed(now) else None
        return cls(
            period=s.period, commitment=s.commitment, starts_at=s.starts_at, ends_at=s.ends_at,
            seed=shown,
        )  # fmt: skip


class FairnessOut(BaseModel):
    model_config = examples_of(
        {"activity_id": 100301, "current": SEED, "next": {**SEED, "period": 4}, "revealed": []}
    )

    activity_id: int
    current: SeedOut
    next: SeedOut
    revealed: list[SeedOut] = Field(description="Past periods' seeds, newest first.")
    scheduled: ScheduledOut | None = Field(None, description="A scheduled activity's draw.")

    @classmethod
    def of(cls, activity_id: int, f: Fairness, now: datetime) -> FairnessOut:
        return cls(
            activity_id=activity_id, current=SeedOut.of(f.current, now),
            next=SeedOut.of(f.next, now), revealed=[SeedOut.of(s, now) for s in f.revealed],
        )  # fmt: skip


class ClientSeedIn(BaseModel):
    model_config = examples_of({"client_seed": "lucky-7"})

    client_seed: str = Field(min_length=1, max_length=CLIENT_SEED_LENGTH)


class ClientSeedOut(BaseModel):
    model_config = examples_of({"client_seed": "lucky-7"})

    client_seed: str


class VerdictOut(BaseModel):
    model_config = examples_of({"revealed": True, "matches": True, "differs": []})

    revealed: bool = Field(description="False while the draw's seed is still secret.")
    matches: bool
    differs: list[str] = Field(description="The receipt's fields that differ.")

    @classmethod
    def of(cls, v: Verdict) -> VerdictOut:
        return cls(revealed=v.revealed, matches=v.matches, differs=list(v.differs))
