"""Operators lock and unlock players' accounts, each time with a reason that is kept."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Body, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field

from raffle.domain.users import REASON_MAX, StatusChange, User, UserStatus
from raffle.entrypoints.http import examples
from raffle.entrypoints.http.bounds import UserIdPath as UserId
from raffle.entrypoints.http.deps import AdminSession, IdempotencyKey, RaffleDep
from raffle.entrypoints.http.examples import examples_of
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.problems import documented
from raffle.service import accounts

router = APIRouter(prefix="/api/admin/users", tags=["operator"])


class StatusChangeIn(BaseModel):
    model_config = examples_of(examples.STATUS_CHANGE_IN)

    reason: str = Field("", max_length=REASON_MAX, description="Why: kept with the change.")


class StatusChangeOut(BaseModel):
    model_config = examples_of(examples.STATUS_CHANGE)

    status: UserStatus
    reason: str
    by: str | None = Field(description="The operator; null: the command line.")
    at: datetime

    @classmethod
    def of(cls, change: StatusChange) -> StatusChangeOut:
        return cls(status=change.status, reason=change.reason, by=change.by, at=change.at)


class AccountStatusOut(BaseModel):
    model_config = examples_of(examples.ACCOUNT_STATUS)

    id: str
    is_admin: bool
    status: UserStatus
    changes: list[StatusChangeOut] = Field(description="The last locks and unlocks, newest first.")

    @classmethod
    def of(cls, user: User, changes: list[StatusChange]) -> AccountStatusOut:
        return cls(
            id=user.id,
            is_admin=user.is_admin,
            status=user.status,
            changes=[StatusChangeOut.of(c) for c in changes],
        )


# Optional: a lock without a body keeps an empty reason.
ReasonBody = Annotated[
    StatusChangeIn | None,
    Body(openapi_examples={"reason": {"value": examples.STATUS_CHANGE_IN}}),
]


@router.get("/{user_id}", response_model=AccountStatusOut, responses=documented(401, 403, 404, 422))
async def status(user_id: UserId, session: AdminSession, raffle: RaffleDep) -> AccountStatusOut:
    """The account's status and its last locks and unlocks: who, when and why."""
    return AccountStatusOut.of(*await accounts.changes(user_id, raffle.uow()))


@router.post(
    "/{user_id}/lock", response_model=AccountStatusOut, responses=documented(401, 403, 404, 422)
)
async def lock(
    user_id: UserId,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
    body: ReasonBody = None,
) -> Response:
    """Lock an account: its sessions end at once (their next request is 401
    `session_ended`) and its sign-ins are refused (403 `account_locked`) until it is
    unlocked. Nothing it owns is touched. The operator, the time and the reason are kept."""

    async def run() -> AccountStatusOut:
        await accounts.lock(
            user_id,
            by=session.user_id,
            reason=body.reason if body else "",
            uow=raffle.uow(),
            sessions=raffle.sessions,
            clock=raffle.clock,
        )
        return AccountStatusOut.of(*await accounts.changes(user_id, raffle.uow()))

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.post(
    "/{user_id}/unlock", response_model=AccountStatusOut, responses=documented(401, 403, 404, 422)
)
async def unlock(
    user_id: UserId,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
    body: ReasonBody = None,
) -> Response:
    """Let a locked account sign in again (the operator, the time and the reason kept)."""

    async def run() -> AccountStatusOut:
        await accounts.unlock(
            user_id,
            by=session.user_id,
            reason=body.reason if body else "",
            uow=raffle.uow(),
            clock=raffle.clock,
        )
        return AccountStatusOut.of(*await accounts.changes(user_id, raffle.uow()))

    return await once(request, raffle.idempotency, session.user_id, key, run)
