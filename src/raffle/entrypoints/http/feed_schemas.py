"""The HTTP shapes of the winners' feed."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from raffle.entrypoints.http import examples
from raffle.entrypoints.http.examples import examples_of
from raffle.service.winners_feed import FeedEntry, FeedPage


class FeedWinOut(BaseModel):
    model_config = examples_of(examples.FEED_WIN)

    winner: str = Field(description="The winner's name masked: its first and last character.")
    award_id: int
    title: str = Field(description="The prize's title.")
    won_at: datetime

    @classmethod
    def of(cls, e: FeedEntry) -> FeedWinOut:
        return cls(winner=e.winner, award_id=e.award_id, title=e.title, won_at=e.won_at)


class FeedOut(BaseModel):
    model_config = examples_of(examples.FEED)

    display: str = Field(description="How the activity shows the feed: `ticker` or `tiled`.")
    wins: list[FeedWinOut] = Field(description="Newest first.")
    next: str | None = Field(
        description="The `cursor` of the older wins; null when there are none."
    )
    newer: str | None = Field(
        description="The `after` that asks for the wins newer than these; null: ask the "
        "first page again."
    )

    @classmethod
    def of(cls, p: FeedPage) -> FeedOut:
        wins = [FeedWinOut.of(e) for e in p.wins]
        return cls(display=p.display.value, wins=wins, next=p.next, newer=p.newer)
