"""Verifiable draws: an activity's commitments and revealed seeds, a player's client seed
and receipts, the public verifier, and an operator's rotation."""

from __future__ import annotations

from fastapi import APIRouter

from raffle.entrypoints.http.bounds import ActivityId, OrderId
from raffle.entrypoints.http.deps import AdminSession, CurrentSession, RaffleDep
from raffle.entrypoints.http.fairness_schemas import (
    ClientSeedIn,
    ClientSeedOut,
    FairnessOut,
    ReceiptIn,
    ReceiptOut,
    VerdictOut,
)
from raffle.entrypoints.http.problems import documented
from raffle.entrypoints.http.scheduled_schemas import ScheduledOut
from raffle.service import fairness, receipts, scheduled

router = APIRouter()


@router.get("/api/activities/{activity_id}/fairness", tags=["player"], responses=documented(404))
async def activity_fairness(activity_id: ActivityId, raffle: RaffleDep) -> FairnessOut:
    """The commitment (SHA-256) of the seed the activity's draws take now, the next one's,
    and the seeds of the periods that are over. A seed is shown only once its period ends.
    A scheduled activity's draw record too (`scheduled`: its seed's commitment, the frozen
    entrant list's hash, the seed once drawn)."""
    now = raffle.clock.now()
    activity = await raffle.catalogue.activity(activity_id)
    found = await fairness.fairness(activity, seeds=raffle.seeds, uow=raffle.uow(), now=now)
    out = FairnessOut.of(activity_id, found, now)
    if activity.schedule is not None:
        record = await scheduled.public_record(activity, uow=raffle.uow, catalogue=raffle.catalogue)
        out.scheduled = ScheduledOut.of(record)
    return out


@router.get("/api/me/client-seed", tags=["player"], responses=documented(401))
async def my_client_seed(session: CurrentSession, raffle: RaffleDep) -> ClientSeedOut:
    """The client seed the player's draws take: their own, or one made for them."""
    return ClientSeedOut(client_seed=await raffle.seeds.client_seed(session.user_id))


@router.put("/api/me/client-seed", tags=["player"], responses=documented(401, 422))
async def set_client_seed(
    body: ClientSeedIn, session: CurrentSession, raffle: RaffleDep
) -> ClientSeedOut:
    """Set the player's own client seed (printable ASCII, no `|`): mixed into every later
    draw's randomness, so no server seed could have been chosen against it."""
    seed = await raffle.seeds.set_client_seed(session.user_id, body.client_seed, raffle.clock.now())
    return ClientSeedOut(client_seed=seed)


@router.get("/api/me/draws/{order_id}/receipt", tags=["player"], responses=documented(401, 404))
async def my_receipt(order_id: OrderId, session: CurrentSession, raffle: RaffleDep) -> ReceiptOut:
    """The receipt of one of the player's draws, as the draw answered it."""
    found = await receipts.my_receipt(
        session.user_id, order_id, shards=raffle.shards, config=raffle.uow,
        catalogue=raffle.catalogue, seeds=raffle.seeds,
    )  # fmt: skip
    return ReceiptOut.of(found)


@router.post("/api/receipts/verify", tags=["player"], responses=documented(404, 422))
async def verify(body: ReceiptIn, raffle: RaffleDep) -> VerdictOut:
    """Check any receipt: once its period's seed is revealed, the draw is computed again from
    the seed, the receipt and the published odds; the answer names each field that differs."""
    verdict = await receipts.verify(
        body.receipt(), config=raffle.uow, catalogue=raffle.catalogue, seeds=raffle.seeds,
        now=raffle.clock.now(),
    )  # fmt: skip
    return VerdictOut.of(verdict)


@router.post(
    "/api/admin/activities/{activity_id}/fairness/rotate",
    tags=["operator"],
    responses=documented(401, 403, 404),
)
async def rotate(activity_id: ActivityId, _: AdminSession, raffle: RaffleDep) -> FairnessOut:
    """End the activity's seed period now: its seed is revealed after a two-second grace
    (every process stops drawing on it first), and the next period's committed seed takes
    over; the one after is made and committed at once."""
    now = raffle.clock.now()
    activity = await raffle.catalogue.activity(activity_id)
    await raffle.seeds.rotate(activity, now)
    found = await fairness.fairness(activity, seeds=raffle.seeds, uow=raffle.uow(), now=now)
    return FairnessOut.of(activity_id, found, now)
