"""Operators' deny lists (add, import, list, lift) and automatic blocking rules."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response

from raffle.domain.deny import MAX_VALUE, DenyKind
from raffle.entrypoints.http.bounds import ID_LIMIT, Limit
from raffle.entrypoints.http.deny_schemas import (
    BlockRuleIn,
    BlockRuleOut,
    DenyEntryIn,
    DenyEntryOut,
    DenyImportIn,
    DenyImportOut,
    DenyPageOut,
    RuleDeleted,
)
from raffle.entrypoints.http.deps import AdminSession, IdempotencyKey, RaffleDep
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.problems import documented
from raffle.service import block_rules, deny_lists
from raffle.service.ports.deny import DenyQuery

router = APIRouter(prefix="/api/admin", tags=["operator"])

EntryId = Annotated[int, Path(ge=1, lt=ID_LIMIT, examples=[7])]
RuleId = Annotated[int, Path(ge=1, lt=ID_LIMIT, examples=[1])]
After = Annotated[int | None, Query(ge=1, lt=ID_LIMIT, description="A `next` cursor.")]


@router.get("/deny-list", responses=documented(401, 403, 422))
async def listed(
    session: AdminSession,
    raffle: RaffleDep,
    kind: DenyKind | None = None,
    value: Annotated[str | None, Query(max_length=MAX_VALUE, description="A prefix.")] = None,
    automatic: bool | None = None,
    in_force: Annotated[bool, Query(description="Only entries not expired.")] = False,
    after: After = None,
    limit: Limit = 50,
) -> DenyPageOut:
    """Deny entries, newest first, a page at a time; automatic ones carry their evidence."""
    at = raffle.clock.now() if in_force else None
    query = DenyQuery(kind, value, automatic, at)
    found = await deny_lists.entries(query, after, limit, raffle.deny, raffle.phones)
    more = str(found[-1].id) if len(found) == limit else None
    return DenyPageOut(entries=[DenyEntryOut.of(e) for e in found], next=more)


@router.post("/deny-list", response_model=DenyEntryOut, responses=documented(401, 403, 422))
async def add(
    body: DenyEntryIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Deny a user, a phone, an address or CIDR range, or a device serial, in every process
    within a second; the acting operator is recorded. Denied requests answer 403 `denied`
    without saying which list or why."""

    async def run() -> DenyEntryOut:
        entry = await deny_lists.add_entry(body.new(), session.user_id, raffle.deny, raffle.phones)
        return DenyEntryOut.of(entry)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.post("/deny-list/import", response_model=DenyImportOut, responses=documented(401, 403, 422))
async def import_list(
    body: DenyImportIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Add a list of entries, all or none: an invalid one is refused with its index."""

    async def run() -> DenyImportOut:
        news = [e.new() for e in body.entries]
        added = await deny_lists.import_entries(news, session.user_id, raffle.deny, raffle.phones)
        return DenyImportOut(added=added)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.delete(
    "/deny-list/{entry_id}", response_model=DenyEntryOut, responses=documented(401, 403, 404, 422)
)
async def lift(
    entry_id: EntryId,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Lift an entry: it denies no more, in every process within a second. Lifting an
    automatic one also starts its rule's count of that user or address again."""

    async def run() -> DenyEntryOut:
        lifted = await deny_lists.lift(entry_id, raffle.deny, raffle.blocking, by=session.user_id)
        return DenyEntryOut.of(lifted)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.get("/block-rules", responses=documented(401, 403))
async def rules(session: AdminSession, raffle: RaffleDep) -> list[BlockRuleOut]:
    """The automatic blocking rules, oldest first."""
    return [BlockRuleOut.of(r) for r in block_rules.rules(raffle.deny)]


@router.post("/block-rules", response_model=BlockRuleOut, responses=documented(401, 403, 422))
async def add_rule(
    body: BlockRuleIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """More than `threshold` events (`refused_draw`: a draw answered with a refusal;
    `failed_login`: a wrong name or password) of one user or address in `window_minutes`
    deny it for `block_minutes`. Counted in windows that open at the first event."""

    async def run() -> BlockRuleOut:
        rule = await block_rules.add_rule(
            body.event,
            body.subject,
            threshold=body.threshold,
            window_minutes=body.window_minutes,
            block_minutes=body.block_minutes,
            actor=session.user_id,
            board=raffle.deny,
        )
        return BlockRuleOut.of(rule)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.delete(
    "/block-rules/{rule_id}", response_model=RuleDeleted, responses=documented(401, 403, 404, 422)
)
async def delete_rule(
    rule_id: RuleId,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Delete a rule: it counts no more; the entries it made stay until lifted or expired."""

    async def run() -> RuleDeleted:
        await block_rules.delete_rule(rule_id, raffle.deny)
        return RuleDeleted(rule_id=rule_id, deleted=True)

    return await once(request, raffle.idempotency, session.user_id, key, run)
