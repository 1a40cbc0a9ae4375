"""Decision trees: operators save, read and delete them; a player asks which activity is theirs."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response

from raffle.domain.route_tree_documents import from_document
from raffle.entrypoints.http.deps import AdminSession, CurrentSession, IdempotencyKey, RaffleDep
from raffle.entrypoints.http.idempotent import once
from raffle.entrypoints.http.problems import documented
from raffle.entrypoints.http.route_tree_schemas import (
    RouteOut,
    RouteTreeDeletedOut,
    RouteTreeIn,
    RouteTreeOut,
)
from raffle.service.route_trees import delete_tree, my_route, save_tree, stored_tree, trees

router = APIRouter(tags=["operator"])
player = APIRouter(tags=["player"])

TreeName = Annotated[str, Path(min_length=1, max_length=64, examples=["newcomers"])]
BaseVersion = Annotated[
    int | None,
    Query(ge=0, lt=2**63, description="Delete only this version, else 409."),
]


@router.get("/api/admin/route-trees", responses=documented(401, 403))
async def listed(session: AdminSession, raffle: RaffleDep) -> list[RouteTreeOut]:
    """Every decision tree, its newest version, by name."""
    return [RouteTreeOut.of(t) for t in await trees(raffle.uow)]


@router.get("/api/admin/route-trees/{name}", responses=documented(401, 403, 404, 422))
async def one(name: TreeName, session: AdminSession, raffle: RaffleDep) -> RouteTreeOut:
    return RouteTreeOut.of(await stored_tree(name, raffle.uow))


@router.put(
    "/api/admin/route-trees/{name}",
    response_model=RouteTreeOut,
    responses=documented(400, 401, 403, 409, 422),
)
async def save(
    name: TreeName,
    body: RouteTreeIn,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
) -> Response:
    """Save the tree as the name's next version, checked first: a refusal (422
    `invalid_route_tree`) lists every problem with its `reason` — `cycle`, `dangling_line`,
    `unknown_activity`, `activity_cannot_run`, `unreachable`, `missing_default`,
    `value_type`, `operator_unfit`, … — and saves nothing."""

    async def run() -> RouteTreeOut:
        saved = await save_tree(
            from_document(body.document(name)),
            base_version=body.base_version,
            actor=session.user_id,
            uow=raffle.uow,
            clock=raffle.clock,
        )
        return RouteTreeOut.of(saved)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@router.delete(
    "/api/admin/route-trees/{name}",
    response_model=RouteTreeDeletedOut,
    responses=documented(401, 403, 404, 409, 422),
)
async def delete(
    name: TreeName,
    request: Request,
    session: AdminSession,
    key: IdempotencyKey,
    raffle: RaffleDep,
    base_version: BaseVersion = None,
) -> Response:
    """Delete the tree; its versions stay in the history, and the deletion takes one."""

    async def run() -> RouteTreeDeletedOut:
        version = await delete_tree(
            name,
            base_version=base_version,
            actor=session.user_id,
            uow=raffle.uow,
            clock=raffle.clock,
        )
        return RouteTreeDeletedOut(name=name, version=version)

    return await once(request, raffle.idempotency, session.user_id, key, run)


@player.get("/api/me/route/{tree}", responses=documented(401, 404, 422))
async def my(
    tree: Annotated[str, Path(min_length=1, max_length=64, examples=["newcomers"])],
    session: CurrentSession,
    raffle: RaffleDep,
) -> RouteOut:
    """Which activity is mine by this tree, and the path: each node, my fact it tested
    (`known` false: my profile does not say) and the line taken."""
    found = await my_route(
        session.user_id,
        tree,
        uow=raffle.uow,
        profiles=raffle.profiles,
        audience=raffle.tags,
        clock=raffle.clock,
    )
    return RouteOut.of(tree, found)
