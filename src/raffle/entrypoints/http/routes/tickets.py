"""Queued draws: a player's ticket, polled until it is drawn."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from fastapi.responses import JSONResponse, Response

from raffle.domain.tickets import Ticket, TicketState, UnknownTicket
from raffle.entrypoints.http.bounds import ActivityId
from raffle.entrypoints.http.deps import CurrentSession, RaffleDep
from raffle.entrypoints.http.problems import STATUS, Problem, documented, response_of
from raffle.entrypoints.http.schemas import DrawOut, draw_json
from raffle.entrypoints.http.ticket_schemas import TicketOut
from raffle.service import queued_draws

router = APIRouter()

TicketId = Annotated[str, Path(min_length=1, max_length=40, description="The draw's ticket.")]
POLL_SECONDS = 1  # what a queued ticket's Retry-After suggests

_ANSWERS: dict[int | str, dict[str, Any]] = {
    200: {"model": DrawOut, "description": "Drawn: the draw's answer, as a direct draw's."},
    202: {"model": TicketOut, "description": "Still queued, with its position."},
    **documented(401, 403, 404, 409),
}


@router.get(
    "/api/activities/{activity_id}/tickets/{ticket}",
    tags=["player"],
    responses=_ANSWERS,
    response_model=None,
)
async def my_ticket(
    activity_id: ActivityId, ticket: TicketId, session: CurrentSession, raffle: RaffleDep
) -> Response:
    """The player's queued draw: `202` while it waits (its position; poll again after
    `Retry-After`), then the draw's answer (`200`, receipt included), or the problem that
    refused it (as a direct draw would have been refused, e.g. 409 `no_chances`)."""
    queued = await queued_draws.mine(session.user_id, ticket, config=raffle.uow)
    found = queued.ticket
    if found.activity_id != activity_id:
        raise UnknownTicket(f"you have no ticket {ticket} in activity {activity_id}")
    if found.state is TicketState.QUEUED:
        body = TicketOut.of(queued).model_dump(mode="json")
        return JSONResponse(body, 202, headers={"Retry-After": str(POLL_SECONDS)})
    if found.state is TicketState.REFUSED:
        return response_of(_refusal(found))
    result = await queued_draws.result_of(
        found, shards=raffle.shards, config=raffle.uow, catalogue=raffle.catalogue,
        seeds=raffle.seeds,
    )  # fmt: skip
    awards = await raffle.catalogue.awards()
    return Response(draw_json(result, awards[result.award_id]), media_type="application/json")


def _refusal(ticket: Ticket) -> Problem:
    """The refusal recorded by its code, answered with the status the error table gives it."""
    code = ticket.refusal or "refused"
    status = next((s for kind, s in STATUS.items() if kind.code == code), 409)
    title = code.replace("_", " ").capitalize()
    return Problem(
        type=f"/problems/{code}", title=title, status=status, detail=ticket.detail or "",
        code=code,
    )  # fmt: skip
