"""Scheduled draws on the wire: a player's entrance, and a draw's published terms and proof."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from raffle.domain.scheduled import Schedule
from raffle.entrypoints.http.examples import WHEN, examples_of
from raffle.service.scheduled import Entrance, PublicRecord

ENTRANCE = {
    "activity_id": 100301,
    "entered_at": WHEN,
    "stage": "drawn",
    "cutoff": "2026-11-11T11:30:00Z",
    "draw_at": "2026-11-11T12:00:00Z",
    "won": [103],
}
HASH = "5d8b1c4e7f0a3d6b9c9f2b5c0e6a1d4b7c8e3f0a2d5b6c9e1f4a7d0b3c6e9f2a"


class ScheduleOut(BaseModel):
    """A scheduled activity's terms, as its campaign file sets them."""

    draw_at: datetime
    cutoff: datetime
    winners_per_prize: int
    one_person_lottery_number: int
    audience: str | None

    @classmethod
    def of(cls, s: Schedule) -> ScheduleOut:
        return cls(
            draw_at=s.draw_at, cutoff=s.cutoff, winners_per_prize=s.winners,
            one_person_lottery_number=s.per_person, audience=s.audience,
        )  # fmt: skip


class EntranceOut(BaseModel):
    model_config = examples_of(ENTRANCE)

    activity_id: int
    entered_at: datetime
    stage: str = Field(description="open (entries taken), frozen (list hashed), drawn.")
    cutoff: datetime
    draw_at: datetime
    won: list[int] = Field(description="The awards the player won; empty before the draw.")

    @classmethod
    def of(cls, e: Entrance) -> EntranceOut:
        return cls(
            activity_id=e.activity_id, entered_at=e.entered_at, stage=e.stage.value,
            cutoff=e.cutoff, draw_at=e.draw_at, won=list(e.won),
        )  # fmt: skip


class ScheduledOut(BaseModel):
    """A scheduled draw's public record: the seed's commitment from the start, the frozen
    list's size and hash from the cutoff, the seed and the skipped entrants after the draw."""

    model_config = examples_of(
        {"draw_at": "2026-11-11T12:00:00Z", "cutoff": "2026-11-11T11:30:00Z",
         "winners_per_prize": 100, "per_person": 1, "audience": None, "prizes": [[103, 100]],
         "commitment": HASH, "entrants": 100000, "entrants_hash": HASH, "frozen_at": WHEN,
         "drawn_at": None, "seed": None, "skipped": []}
    )  # fmt: skip

    draw_at: datetime
    cutoff: datetime
    winners_per_prize: int
    per_person: int = Field(description="The most prizes one person wins (seed 004's limit).")
    audience: str | None = Field(description="The tag an entrant is in at the draw to win.")
    prizes: list[list[int]] | None = Field(
        description="[award, winners] in the order drawn, once the list is frozen."
    )
    commitment: str = Field(description="SHA-256 of the draw's seed.")
    entrants: int | None
    entrants_hash: str | None = Field(
        description="SHA-256 of the entrant ids sorted by their bytes, each followed by a "
        "line feed (the entrant list file): once frozen."
    )
    frozen_at: datetime | None
    drawn_at: datetime | None
    seed: str | None = Field(description="The seed in hex once drawn; else null.")
    skipped: list[str] = Field(description="Entrants outside the audience the draw met.")

    @classmethod
    def of(cls, r: PublicRecord) -> ScheduledOut:
        s, d, terms = r.schedule, r.draw, r.terms
        seed = d.seed
        return cls(
            draw_at=s.draw_at, cutoff=s.cutoff, winners_per_prize=s.winners,
            per_person=s.per_person, audience=s.audience,
            prizes=None if terms is None else [list(p) for p in terms.prizes],
            commitment=d.commitment, entrants=d.entrants, entrants_hash=d.entrants_hash,
            frozen_at=d.frozen_at, drawn_at=d.drawn_at,
            seed=None if seed is None else seed.hex(), skipped=list(d.skipped),
        )  # fmt: skip
