"""The flash sales' doors: the fast stock that answers purchases, and the sales' storage."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from raffle.domain.flash_sales import Answer, OrderState, Purchase, Sale, SaleOrder


@dataclass(frozen=True, slots=True)
class Holding:
    """A user's part of a sale as the fast stock counts it: units held (queued or ordered,
    not expired) and the last sequence number handed out; read back, when the fast stock
    loaded the sale."""

    held: int
    seq: int
    loaded_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Taking:
    """What a take answered: QUEUED with the unit's `seq`, SOLD_OUT or ALREADY_BOUGHT; or
    `loaded` False when the store does not hold the sale (never loaded, or lost)."""

    answer: Answer
    seq: int = 0
    loaded: bool = True


class SaleStock(Protocol):
    """Units of each sale and who holds them, checked and taken in one step."""

    async def load(
        self, sale_id: int, left: int, holders: Mapping[str, Holding], at: datetime
    ) -> bool:
        """Load the sale unless it is loaded (then False: what is there is newer)."""
        ...

    async def take(self, sale_id: int, user_id: str, per_user: int, attempt: str) -> Taking:
        """Has this user reached `per_user`? Else take a unit and count it as theirs. The
        same `attempt` (a random id per purchase) run twice answers the first answer."""
        ...

    async def give_back(self, sale_id: int, user_id: str) -> bool:
        """A unit of the user's returns to the sale; False when the sale is not loaded."""
        ...

    async def give_back_stray(self, sale_id: int, user_id: str, seen: Holding, units: int) -> bool:
        """`units` of the user's back to the sale if their count is still `seen` (held and
        seq); False, nothing changed, when it moved meanwhile or the sale is not loaded."""
        ...

    async def drop_hold(self, sale_id: int, user_id: str, seq: int, seen: Holding) -> bool:
        """One unit fewer counted as the user's for their purchase `seq`, the sale's units
        left unchanged (the unit stays taken), if their count is still `seen` and no drop
        for `seq` was made since the sale was loaded; False, nothing changed, otherwise or
        when the sale is not loaded."""
        ...

    async def holders(self, sale_id: int) -> dict[str, Holding] | None:
        """Every user's holding, or None when the sale is not loaded."""
        ...

    async def left(self, sale_id: int) -> int | None:
        """Units left, or None when the sale is not loaded."""
        ...

    async def holding(self, sale_id: int, user_id: str) -> Holding | None:
        """None when the sale is not loaded."""
        ...

    async def unload(self, sale_id: int) -> None: ...


class FlashSaleRepository(Protocol):
    """The sales in a unit of work: campaign files load and export them."""

    async def add(self, sale: Sale) -> bool:
        """False (and nothing changed) when the id is taken: a sale is never edited."""
        ...

    async def all(self) -> list[Sale]: ...


class SaleStore(Protocol):
    """The sales and their orders, in the configuration database."""

    async def add(self, sale: Sale) -> bool:
        """False when the id is taken."""
        ...

    async def get(self, sale_id: int) -> Sale | None: ...

    async def all(self) -> list[Sale]: ...

    async def order(self, purchase: Purchase, sale: Sale, expires_at: datetime | None) -> str:
        """In one transaction: a unit of the sale's stock taken if one is left (a
        conditional update) and the user holds fewer than `per_user` live orders, and the
        order of `purchase` stored (unique per sale, user and seq), or a refusal otherwise.
        Its order id, or "" when refused. A purchase stored before (a redelivery) answers as
        it did, changing nothing."""
        ...

    async def refuse(self, purchase: Purchase, sale: Sale) -> bool:
        """Store the purchase as refused, taking no unit (its points fell short, its publish
        was not confirmed, or it is a stray whose unit went back); False when it was stored
        before."""
        ...

    async def of_user(self, sale_id: int, user_id: str) -> list[SaleOrder]:
        """The user's orders (and refusals) in the sale, by seq."""
        ...

    async def holders(self, sale_id: int) -> tuple[int, dict[str, Holding]]:
        """Units sold (orders not expired) and each user's holding, from the orders."""
        ...

    async def overdue(self, now: datetime, limit: int) -> Sequence[SaleOrder]:
        """Orders awaiting payment past their window."""
        ...

    async def expire(self, order: SaleOrder, now: datetime) -> bool:
        """Awaiting payment → expired, its unit back in the sale's stock, in one
        transaction; False when it was no longer awaiting payment."""
        ...

    async def pay(self, order: SaleOrder, now: datetime) -> OrderState | None:
        """Awaiting payment → done; the order's state after (DONE also when paid before),
        None when there is no such order."""
        ...

    async def counts(self, sale_id: int) -> dict[str, int]:
        """Orders by state (refusals as "refused")."""
        ...
