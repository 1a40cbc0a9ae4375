"""Receipts: a draw's read back by its order id, and any receipt checked once its seed is out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from raffle.domain.draws import RaffleOrder, Win
from raffle.domain.engine import Outcome
from raffle.domain.errors import RaffleError
from raffle.domain.fairness import ServerSeed
from raffle.domain.receipts import Proof, Receipt, differences, issued
from raffle.service.catalogue import Catalogue
from raffle.service.fairness import SeedBook
from raffle.service.ports import Shards, UnitOfWork


class NoReceipt(RaffleError):
    code = "no_receipt"


@dataclass(frozen=True, slots=True)
class Verdict:
    """What checking a receipt found: `revealed` False when its seed is still secret (nothing
    can be said yet); otherwise the fields that differ, none when it matches."""

    revealed: bool
    differs: tuple[str, ...] = ()

    @property
    def matches(self) -> bool:
        return self.revealed and not self.differs


async def verify(
    receipt: Receipt,
    *,
    config: Callable[[], UnitOfWork],
    catalogue: Catalogue,
    seeds: SeedBook,
    now: datetime,
) -> Verdict:
    """The receipt recomputed from its revealed seed and the activity's published odds.
    The seed is found by the receipt's commitment, or (a commitment changed) by its activity
    and period; with neither, those three fields are what differs."""
    seed = await seeds.of_receipt(receipt.commitment, receipt.activity_id, receipt.period, config)
    if seed is None:
        return Verdict(True, ("activity_id", "period", "commitment"))
    activity = await catalogue.activity(seed.activity_id)
    if not seed.revealed(now):
        await seeds.closed(activity, now)
        return Verdict(False)
    seeds.keep_revealed(seed)
    engine = await catalogue.engine(activity)
    odds = seeds.odds_hash(engine)
    found = differences(receipt, seed.secret, engine.strategy, engine.awards, engine.perfect, odds)
    return Verdict(True, tuple(found))


async def my_receipt(
    user_id: str,
    order_id: str,
    *,
    shards: Shards,
    config: Callable[[], UnitOfWork],
    catalogue: Catalogue,
    seeds: SeedBook,
) -> Receipt:
    """The receipt of one of the player's own draws, issued again from its order."""
    async with shards.for_user(user_id) as uow:
        found = await uow.orders.get(user_id, order_id)
    if found is None:
        raise NoReceipt(f"you have no draw {order_id}")
    order, win = found
    if order.proof is None:
        raise NoReceipt(f"draw {order_id} was made without a committed seed")
    period = Proof.from_text(order.proof).period
    async with config() as cuow:
        seed = await cuow.seeds.get(order.activity_id, period)
    if seed is None:
        raise NoReceipt(f"the seed of draw {order_id} is gone")
    activity = await catalogue.activity(order.activity_id)
    odds = seeds.odds_hash(await catalogue.engine(activity))
    return receipt_of(order, win, seed, odds)


def receipt_of(order: RaffleOrder, win: Win, seed: ServerSeed, odds: str) -> Receipt:
    """The receipt of a recorded draw, issued again from its order and win."""
    if order.proof is None:
        raise NoReceipt(f"order {order.order_id} was drawn without a committed seed")
    proof = Proof.from_text(order.proof)
    outcome = Outcome(win.award_id, win.rule, win.points)
    return issued(seed, odds, proof, order.order_id, order.draw_count, outcome)
