"""Errors to HTTP, in one table: every error is problem+json with a stable `code`."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from raffle.adapters.campaign_file import InvalidCampaignFile
from raffle.domain.activity import IllegalTransition, UnknownAction
from raffle.domain.delivery import NotDeliverable, NotFailed, UnknownWin
from raffle.domain.draws import ActivityNotOpen, UnknownActivity
from raffle.domain.errors import InvalidConfig, RaffleError, Unavailable
from raffle.domain.fulfilment import (
    CodePoolEmpty,
    IllegalShipment,
    InvalidAddress,
    InvalidCodes,
    PrizeNotFound,
)
from raffle.domain.points import InsufficientPoints, InvalidPoints
from raffle.domain.quota import NoChances, SkuSoldOut
from raffle.domain.rebates import InvalidBehaviour, NoRebateRule
from raffle.domain.switches import InvalidSwitch
from raffle.domain.users import (
    AccountLocked,
    Forbidden,
    InvalidCredentials,
    InvalidInput,
    NameTaken,
    NotAuthenticated,
    RateLimited,
    UnknownUser,
)
from raffle.service.campaigns import FrozenOdds, InvalidCampaign, UnknownStrategy
from raffle.service.catalogue import UnknownSku
from raffle.service.idempotency import InvalidKey, KeyInFlight, KeyReused

MEDIA_TYPE = "application/problem+json"

STATUS: dict[type[RaffleError], int] = {
    InvalidInput: 422,
    InvalidConfig: 422,
    InvalidCampaign: 422,
    InvalidCampaignFile: 422,
    InvalidKey: 422,
    KeyReused: 422,
    InvalidAddress: 422,
    InvalidCodes: 422,
    UnknownAction: 422,
    InvalidCredentials: 401,
    NotAuthenticated: 401,
    Forbidden: 403,
    AccountLocked: 403,
    UnknownActivity: 404,
    UnknownSku: 404,
    UnknownStrategy: 404,
    PrizeNotFound: 404,
    UnknownWin: 404,
    UnknownUser: 404,
    NotFailed: 409,
    NotDeliverable: 422,
    ActivityNotOpen: 409,
    NoChances: 409,
    SkuSoldOut: 409,
    IllegalTransition: 409,
    FrozenOdds: 409,
    NameTaken: 409,
    KeyInFlight: 409,
    IllegalShipment: 409,
    CodePoolEmpty: 409,
    RateLimited: 429,
    InvalidSwitch: 422,
    Unavailable: 503,
    InvalidPoints: 422,
    InvalidBehaviour: 422,
    NoRebateRule: 404,
    InsufficientPoints: 409,
}


class Problem(BaseModel):
    """RFC 9457 problem details, with our stable error code."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    current_state: str | None = None
    retry_after: int | None = None
    errors: list[dict[str, Any]] | None = None


def problem_of(error: RaffleError) -> Problem:
    status = next((s for kind, s in STATUS.items() if isinstance(error, kind)), 400)
    extra: dict[str, Any] = {}
    if isinstance(error, IllegalTransition | IllegalShipment):
        extra["current_state"] = error.current.value
    if isinstance(error, RateLimited):
        extra["retry_after"] = error.retry_after
    if isinstance(error, Unavailable):
        extra["retry_after"] = error.retry_after
    if isinstance(error, InvalidCampaignFile):
        extra["errors"] = [
            {"line": p.line, "at": p.where, "message": p.message} for p in error.problems
        ]
    if isinstance(error, InvalidAddress):
        extra["errors"] = [{"at": field, "message": message} for field, message in error.problems]
    if isinstance(error, InvalidCampaign):
        extra["errors"] = [
            {"at": ".".join(map(str, p.path)), "message": p.message} for p in error.problems
        ]
    return _problem(status, error.code, error.message, **extra)


def response_of(problem: Problem) -> JSONResponse:
    headers = {"Retry-After": str(problem.retry_after)} if problem.retry_after else None
    return JSONResponse(
        problem.model_dump(exclude_none=True),
        status_code=problem.status,
        media_type=MEDIA_TYPE,
        headers=headers,
    )


def documented(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for the problems a route can answer with."""
    return {s: {"model": Problem, "content": {MEDIA_TYPE: {}}} for s in statuses}


def install(app: FastAPI) -> None:
    async def raffle_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RaffleError)
        return response_of(problem_of(error))

    async def invalid_request(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        errors = [{"at": ".".join(map(str, e["loc"])), "message": e["msg"]} for e in error.errors()]
        return response_of(
            _problem(422, "invalid_input", "the request is not valid", errors=errors)
        )

    async def http_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, HTTPException)
        code = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code, "http_error")
        return response_of(_problem(error.status_code, code, str(error.detail)))

    app.add_exception_handler(RaffleError, raffle_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(HTTPException, http_error)


def _problem(status: int, code: str, detail: str, **extra: Any) -> Problem:
    title = code.replace("_", " ").capitalize()
    return Problem(
        type=f"/problems/{code}", title=title, status=status, detail=detail, code=code, **extra
    )
