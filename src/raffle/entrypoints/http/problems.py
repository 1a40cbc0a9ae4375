"""Errors to HTTP, in one table: every error is problem+json with a stable `code`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException
from starlette.types import Receive, Scope, Send

from raffle.adapters.campaign_file import InvalidCampaignFile
from raffle.adapters.campaign_pack import InvalidPack
from raffle.adapters.profile_file import InvalidProfileFile, UnsupportedFormat
from raffle.domain.activity import IllegalTransition, UnknownAction
from raffle.domain.blocking import UnknownBlockRule
from raffle.domain.caps import ActivityFull
from raffle.domain.content import (
    ContentExists,
    IllegalContentState,
    InvalidContent,
    PaymentRequired,
    UnknownContent,
)
from raffle.domain.delivery import NotDeliverable, NotFailed, UnknownWin
from raffle.domain.deny import Denied, InvalidDenyEntry, UnknownDenyEntry
from raffle.domain.draws import ActivityNotOpen, UnknownActivity
from raffle.domain.errors import (
    IllegalState,
    InvalidConfig,
    InvalidFields,
    RaffleError,
    Unavailable,
)
from raffle.domain.fairness import BadClientSeed
from raffle.domain.flash_sales import (
    BadPath,
    ChallengeExpired,
    InvalidSale,
    NothingToPay,
    PathExpired,
    SaleExists,
    SaleNotOpen,
    UnknownSale,
    WrongAnswer,
)
from raffle.domain.fulfilment import (
    CodePoolEmpty,
    IllegalShipment,
    InvalidAddress,
    InvalidCodes,
    PrizeNotFound,
)
from raffle.domain.join_codes import (
    InvalidJoinCodes,
    JoinCodeInvalid,
    JoinCodeRequired,
    JoinCodeUsed,
)
from raffle.domain.payments import (
    ContentHeld,
    NotForSale,
    OrderNotOpen,
    RefundNotFailed,
    UnknownOrder,
    UnknownPayment,
)
from raffle.domain.points import InsufficientPoints, InvalidPoints
from raffle.domain.policies import NotAdmitted
from raffle.domain.prize_cards import UnknownPrize
from raffle.domain.prize_claims import ClaimConditionUnmet, PrizeExpired, PrizeNotYetValid
from raffle.domain.prize_images import (
    ImageTooLarge,
    InvalidImage,
    InvalidImageUrl,
    UnknownImage,
)
from raffle.domain.profile_fields import FieldNotEditable, InvalidProfile, PhoneTaken
from raffle.domain.quota import NoChances, SkuSoldOut
from raffle.domain.rebates import InvalidBehaviour, NoRebateRule
from raffle.domain.receipts import BadReceipt
from raffle.domain.route_tree_checks import InvalidRouteTree
from raffle.domain.scheduled import (
    DrawsAtSetTime,
    EntryClosed,
    NotEntered,
    NotFrozen,
    NotScheduled,
)
from raffle.domain.switches import InvalidSwitch
from raffle.domain.tags import InvalidTag, MalformedCondition, TagCycle, TagInUse, UnknownTag
from raffle.domain.tickets import UnknownTicket
from raffle.domain.users import (
    AccountLocked,
    Forbidden,
    InvalidCredentials,
    InvalidInput,
    NameTaken,
    NotAuthenticated,
    RateLimited,
    SessionEnded,
    UnknownUser,
)
from raffle.domain.winners_feed import FeedHidden, InvalidCursor
from raffle.service.campaigns import FrozenOdds, InvalidCampaign, UnknownStrategy
from raffle.service.catalogue import UnknownSku
from raffle.service.idempotency import InvalidKey, KeyInFlight, KeyReused
from raffle.service.payments import PaymentsOff
from raffle.service.ports.payments import GatewayRefused
from raffle.service.receipts import NoReceipt
from raffle.service.route_trees import RouteTreeConflict, UnknownRouteTree

MEDIA_TYPE = "application/problem+json"

# Starlette's and FastAPI's own refusals: 400 is a body that is not the JSON it claims to be.
HTTP_CODES = {400: "malformed_request", 404: "not_found", 405: "method_not_allowed"}

# By status. A subclass before its base where the two differ (the first match answers).
STATUS: dict[type[RaffleError], int] = {
    # 422: the input is not valid
    InvalidInput: 422,
    InvalidConfig: 422,
    InvalidCampaign: 422,
    InvalidCampaignFile: 422,
    InvalidPack: 422,
    InvalidKey: 422,
    KeyReused: 422,
    InvalidAddress: 422,
    InvalidCodes: 422,
    UnknownAction: 422,
    NotDeliverable: 422,  # the award as configured cannot be delivered: retrying will not help
    InvalidSwitch: 422,
    InvalidPoints: 422,
    InvalidBehaviour: 422,
    InvalidProfile: 422,
    InvalidProfileFile: 422,
    InvalidRouteTree: 422,
    InvalidTag: 422,
    MalformedCondition: 422,
    InvalidImage: 422,
    InvalidImageUrl: 422,
    InvalidContent: 422,
    InvalidDenyEntry: 422,
    JoinCodeInvalid: 422,
    InvalidJoinCodes: 422,
    InvalidCursor: 422,
    BadClientSeed: 422,
    BadReceipt: 422,
    InvalidSale: 422,
    # 401: who is asking is not known
    InvalidCredentials: 401,
    NotAuthenticated: 401,
    SessionEnded: 401,
    # 402: paid content not bought
    PaymentRequired: 402,
    # 403: known, but this person may not
    Forbidden: 403,
    NotAdmitted: 403,
    AccountLocked: 403,
    FieldNotEditable: 403,
    Denied: 403,
    JoinCodeRequired: 403,
    ClaimConditionUnmet: 403,
    BadPath: 403,  # nothing taken: a path made up, another user's or another sale's
    PathExpired: 403,
    WrongAnswer: 403,
    ChallengeExpired: 403,
    # 404: what the request names does not exist
    UnknownActivity: 404,
    UnknownSku: 404,
    UnknownStrategy: 404,
    PrizeNotFound: 404,
    UnknownWin: 404,
    UnknownUser: 404,
    NoRebateRule: 404,
    UnknownRouteTree: 404,
    UnknownTag: 404,
    UnknownImage: 404,
    UnknownPrize: 404,
    UnknownContent: 404,
    UnknownDenyEntry: 404,
    UnknownBlockRule: 404,
    FeedHidden: 404,
    UnknownOrder: 404,
    UnknownPayment: 404,
    PaymentsOff: 404,
    NoReceipt: 404,
    UnknownTicket: 404,
    UnknownSale: 404,
    NotEntered: 404,
    # 409: the request conflicts with the current state
    NotFailed: 409,
    ActivityNotOpen: 409,
    NoChances: 409,
    ActivityFull: 409,
    SkuSoldOut: 409,
    IllegalTransition: 409,
    FrozenOdds: 409,
    NameTaken: 409,
    KeyInFlight: 409,
    IllegalShipment: 409,
    CodePoolEmpty: 409,
    InsufficientPoints: 409,
    PhoneTaken: 409,
    RouteTreeConflict: 409,
    TagCycle: 409,
    TagInUse: 409,
    ContentExists: 409,
    IllegalContentState: 409,
    JoinCodeUsed: 409,
    PrizeExpired: 409,
    PrizeNotYetValid: 409,
    OrderNotOpen: 409,
    ContentHeld: 409,
    NotForSale: 409,
    RefundNotFailed: 409,
    SaleExists: 409,
    SaleNotOpen: 409,
    EntryClosed: 409,
    NotScheduled: 409,
    DrawsAtSetTime: 409,
    NotFrozen: 409,
    NothingToPay: 409,
    # 413, 415: the upload too large, or of a format not read
    ImageTooLarge: 413,
    UnsupportedFormat: 415,
    # 429: too many: wait `retry_after`
    RateLimited: 429,
    GatewayRefused: 502,  # the payment gateway said no: not the caller's request
    # 503: not the caller's doing: try again later
    Unavailable: 503,
}


class ProblemDetail(BaseModel):
    """One of several problems of a request: where, and what is wrong there."""

    at: str = Field(description="The field (`body.sku`) or file path (`strategies.0.rate`).")
    message: str
    line: int | None = Field(None, description="A campaign file's or a condition's line, from 1.")
    reason: str | None = Field(
        None,
        description="A stable kind of problem: a tree's checks, a campaign file's problems "
        "with a code of their own (`queued_and_scheduled`).",
    )
    column: int | None = Field(None, description="A condition's column, from 1.")


class PolicyRefusal(BaseModel):
    """Why one participation policy of the activity did not admit the user."""

    policy_id: int
    reason: str = Field(
        description="not_in_audience, level_required, insufficient_points, "
        "join_limit_reached or win_limit_reached."
    )


class Problem(BaseModel):
    """RFC 9457 problem details, with our stable error code."""

    type: str = Field(description="A URI reference naming the kind: `/problems/{code}`.")
    title: str = Field(description="The code in words.")
    status: int = Field(description="The HTTP status, repeated.")
    detail: str = Field(description="What went wrong this time, for a person to read.")
    code: str = Field(description="Stable and machine-readable: branch on it, not on `detail`.")
    current_state: str | None = Field(
        None,
        description="A workflow step, shipment, content or payment order state refused: its state.",
    )
    retry_after: int | None = Field(None, description="Seconds to wait (as `Retry-After`).")
    errors: list[ProblemDetail] | None = Field(None, description="Each problem of the input.")
    refusals: list[PolicyRefusal] | None = Field(
        None, description="A draw no policy admits: each policy's reason (code not_admitted)."
    )
    content_id: str | None = Field(None, description="payment_required: the content.")
    price_cents: int | None = Field(None, description="payment_required: what it costs.")
    missing: list[str] | None = Field(
        None,
        description="A claim refused with claim_condition_unmet: the profile fields to add "
        "(`phone`, `region`, `attrs.<name>`...).",
    )


def _at(where: str, error: RaffleError) -> dict[str, Any]:
    """The error's message as the one problem of the input, at `where`."""
    return {"errors": [{"at": where, "message": error.message}]}


# What an error's answer carries besides its code and message, by the kind of error.
DETAILS: tuple[tuple[Any, Callable[[Any], dict[str, Any]]], ...] = (
    (IllegalState, lambda e: {"current_state": e.current.value}),
    (RateLimited | Unavailable, lambda e: {"retry_after": e.retry_after}),
    (InvalidImageUrl, lambda e: _at("body.image", e)),
    (InvalidImage | ImageTooLarge, lambda e: _at("body.file", e)),
    (
        InvalidCampaignFile,
        lambda e: {
            "errors": [
                {"line": p.line, "at": p.where, "message": p.message, "reason": p.reason}
                for p in e.problems
            ]
        },
    ),
    (
        MalformedCondition,
        lambda e: {
            "errors": [
                {"at": "body.condition", "message": e.message, "line": e.line, "column": e.column}
            ]
        },
    ),
    (PaymentRequired, lambda e: {"content_id": e.content_id, "price_cents": e.price_cents}),
    (InvalidFields, lambda e: {"errors": [{"at": f, "message": m} for f, m in e.problems]}),
    (InvalidProfile, lambda e: _at(f"body.{e.field}", e) if e.field else {}),
    (
        InvalidProfileFile,
        lambda e: (
            {"errors": [{"line": e.line, "at": "file", "message": e.message}]} if e.line else {}
        ),
    ),
    (
        InvalidRouteTree,
        lambda e: {
            "errors": [
                {"at": ".".join(map(str, p.path)), "message": p.message, "reason": p.reason}
                for p in e.problems
            ]
        },
    ),
    (
        InvalidCampaign,
        lambda e: {
            "errors": [{"at": ".".join(map(str, p.path)), "message": p.message} for p in e.problems]
        },
    ),
    (
        InvalidJoinCodes,
        lambda e: {"errors": [{"at": f"body.codes.{i}", "message": m} for i, m in e.problems]},
    ),
    (ClaimConditionUnmet, lambda e: {"missing": e.missing}),
    (
        NotAdmitted,
        lambda e: {"refusals": [{"policy_id": p, "reason": r} for p, r in e.reasons.items()]},
    ),
)


def problem_of(error: RaffleError) -> Problem:
    status, found = _entries(type(error))
    extra: dict[str, Any] = {}
    for details in found:
        extra.update(details(error))
    return _problem(status, error.code, error.message, **extra)


Entries = tuple[int, tuple[Callable[[Any], dict[str, Any]], ...]]
_ENTRIES: dict[type[RaffleError], Entries] = {}


def _entries(kind: type[RaffleError]) -> Entries:
    """The status and the details of an error type, looked up in the tables once a type."""
    if (found := _ENTRIES.get(kind)) is None:
        status = next((s for base, s in STATUS.items() if issubclass(kind, base)), 400)
        details = tuple(details for base, details in DETAILS if issubclass(kind, base))
        found = _ENTRIES[kind] = (status, details)
    return found


def response_of(problem: Problem) -> JSONResponse:
    headers = {"Retry-After": str(problem.retry_after)} if problem.retry_after else None
    return JSONResponse(
        problem.model_dump(exclude_none=True),
        status_code=problem.status,
        media_type=MEDIA_TYPE,
        headers=headers,
    )


async def send_problem(error: RaffleError, scope: Scope, receive: Receive, send: Send) -> None:
    """Answers `error` as `response_of(problem_of(error))` does, message for message. An error
    that carries nothing but its message is rendered once per message: refusals are most of
    the answers under a rush, and their messages few (tests/unit/test_problems holds the two
    ways together)."""
    status, details = _entries(type(error))
    if details:
        await response_of(problem_of(error))(scope, receive, send)
        return
    headers, body = _plain(status, error.code, error.message)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@functools.lru_cache(maxsize=4096)
def _plain(status: int, code: str, message: str) -> tuple[list[tuple[bytes, bytes]], bytes]:
    response = response_of(_problem(status, code, message))
    return response.raw_headers, bytes(response.body)


def documented(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for the problems a route can answer with: the document gives each
    the problem+json schema and an example (openapi.py)."""
    return {s: {"description": HTTPStatus(s).phrase} for s in statuses}


def example(status: int) -> dict[str, Any]:
    """A problem answered with `status`, for the OpenAPI document."""
    return EXAMPLES.get(status) or _example(status, "http_error", HTTPStatus(status).description)


def _example(status: int, code: str, detail: str, **extra: Any) -> dict[str, Any]:
    return _problem(status, code, detail, **extra).model_dump(exclude_none=True)


def install(app: FastAPI) -> None:
    async def raffle_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RaffleError)
        return response_of(problem_of(error))

    async def invalid_request(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        return invalid(error)

    async def http_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, HTTPException)
        code = HTTP_CODES.get(error.status_code, "http_error")
        return response_of(_problem(error.status_code, code, str(error.detail)))

    app.add_exception_handler(RaffleError, raffle_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(HTTPException, http_error)


def invalid(error: RequestValidationError) -> JSONResponse:
    """The answer to a request that does not validate: 422 `invalid_input`, each error at its
    place."""
    errors = [{"at": ".".join(map(str, e["loc"])), "message": e["msg"]} for e in error.errors()]
    return response_of(_problem(422, "invalid_input", "the request is not valid", errors=errors))


def _problem(status: int, code: str, detail: str, **extra: Any) -> Problem:
    title = code.replace("_", " ").capitalize()
    return Problem(
        type=f"/problems/{code}", title=title, status=status, detail=detail, code=code, **extra
    )


# One problem per status, for the OpenAPI document: what a client meets most often there.
EXAMPLES: dict[int, dict[str, Any]] = {
    400: _example(400, "malformed_request", "There was an error parsing the body"),
    401: _example(401, "not_authenticated", "log in first: send 'Authorization: Bearer <token>'"),
    402: _example(
        402,
        "payment_required",
        "content 'course-1' is for those who bought it or won it",
        content_id="course-1",
        price_cents=990,
    ),
    403: _example(403, "forbidden", "operators only"),
    404: _example(404, "unknown_activity", "activity 424242 does not exist"),
    409: _example(409, "no_chances", "no chances left today"),
    422: _example(
        422,
        "invalid_input",
        "the request is not valid",
        errors=[
            ProblemDetail(
                at="path.activity_id",
                message="Input should be less than or equal to 9223372036854775807",
            )
        ],
    ),
    429: _example(429, "rate_limited", "at most 10 draws per second", retry_after=1),
    503: _example(503, "unavailable", "prize stock is unavailable", retry_after=1),
}
