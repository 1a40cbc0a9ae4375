"""A queued draw's ticket, as answered while it waits."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from raffle.entrypoints.http import examples
from raffle.entrypoints.http.examples import examples_of
from raffle.service.queued_draws import Queued


class TicketOut(BaseModel):
    model_config = examples_of(examples.TICKET)

    ticket: str = Field(description="Opaque; poll GET /api/activities/{id}/tickets/{ticket}.")
    activity_id: int
    state: str = Field(description="queued, drawn or refused.")
    position: int = Field(
        description="Tickets of the activity drawn before this one, itself counted (1: next); "
        "0 once it is drawn or refused."
    )
    accepted_at: datetime

    @classmethod
    def of(cls, queued: Queued) -> TicketOut:
        t = queued.ticket
        return cls(
            ticket=t.ticket, activity_id=t.activity_id, state=t.state.value,
            position=queued.position, accepted_at=t.accepted_at,
        )  # fmt: skip


def ticket_path(activity_id: int, ticket: str) -> str:
    return f"/api/activities/{activity_id}/tickets/{ticket}"
