"""Operators lock and unlock players' accounts."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel

from raffle.domain.users import User, UserStatus
from raffle.entrypoints.http import examples
from raffle.entrypoints.http.bounds import UserIdPath as UserId
from raffle.entrypoints.http.deps import AdminSession, IdempotencyKey, RaffleDep
from raffle.entrypoints.http.examples import examples_of
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.problems import documented
from raffle.service import accounts

router = APIRouter(prefix="/api/admin/users", tags=["operator"])


class AccountStatusOut(BaseModel):
    model_config = examples_of(examples.ACCOUNT_STATUS)

    id: str
    is_admin: bool
    status: UserStatus

    @classmethod
    def of(cls, user: User) -> AccountStatusOut:
        return cls(id=user.id, is_admin=user.is_admin, status=user.status)


@router.post(
    "/{user_id}/lock", response_model=AccountStatusOut, responses=documented(401, 403, 404, 422)
)
async def lock(
    user_id: UserId, request: Request, session: AdminSession, key: IdempotencyKey, raffle: RaffleDep
) -> Response:
    """Lock an account: its sessions end at once and its sign-ins are refused
    (`account_locked`) until it is unlocked. Nothing it owns is touched."""

    async def run() -> AccountStatusOut:
        user = await accounts.lock(
            user_id, by=session.user_id, uow=raffle.uow(), sessions=raffle.sessions
        )
        return AccountStatusOut.of(user)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.post(
    "/{user_id}/unlock", response_model=AccountStatusOut, responses=documented(401, 403, 404, 422)
)
async def unlock(
    user_id: UserId, request: Request, session: AdminSession, key: IdempotencyKey, raffle: RaffleDep
) -> Response:
    """Let a locked account sign in again."""

    async def run() -> AccountStatusOut:
        return AccountStatusOut.of(await accounts.unlock(user_id, uow=raffle.uow()))

    return await once(request, raffle.idempotency, session.user_id, key, run)
